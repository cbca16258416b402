/**
 * The part of Express the paywall's path tests use (test/e2e/x402-paywall-paths.test.ts). Express
 * is here as a dependency of @modelcontextprotocol/sdk and ships without types.
 */
declare module 'express' {
  import type { Server } from 'node:http';

  interface Request {
    url: string;
  }
  interface Response {
    send(body: string): Response;
    status(code: number): Response;
  }
  type Handler = (req: Request, res: Response) => void;
  interface Express {
    get(path: string, handler: Handler): void;
    use(handler: Handler): void;
    listen(port: number, host: string): Server;
  }
  export default function express(): Express;
}
