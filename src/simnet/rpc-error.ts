/**
 * A JSON-RPC error with the code and message the real Solana RPC uses for the same fault,
 * so clients that branch on codes (-32002 preflight failure, -32003 signature failure,
 * -32015 unsupported version, -32602 bad params) behave as they would on a cluster.
 */
export class RpcError extends Error {
  constructor(
    readonly rpcCode: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

/** -32602 with the real node's "Invalid params" wording. */
export function invalidParams(detail: string): RpcError {
  return new RpcError(-32602, `Invalid params: ${detail}`);
}

/** -32602 for one bad parameter value ("Invalid param: …"). */
export function invalidParam(detail: string): RpcError {
  return new RpcError(-32602, `Invalid param: ${detail}`);
}
