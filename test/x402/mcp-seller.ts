/**
 * A paid MCP server for tests: the MCP SDK's McpServer over Streamable HTTP (stateless), with one
 * tool `analyze {ticker}` that costs $0.01 through x402's MCP transport (tool-result binding,
 * x402-foundation/x402 specs/transports-v2/mcp.md): without `_meta["x402/payment"]` it answers
 * `isError` with the `PaymentRequired` of `@x402/core`'s resource server (in structuredContent and
 * as JSON text); with one, it verifies and settles through the facilitator, then answers with
 * `_meta["x402/payment-response"]`. The tool `echo` costs nothing. The tool `oracle` lies: it
 * takes the payment, never settles it, and answers with a receipt naming a transaction that is not
 * the buyer's.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { Address } from '@solana/kit';
import type { PaymentPayload } from '@x402/core/types';
import { x402ResourceServer } from '@x402/hono';
import { ExactSvmScheme } from '@x402/svm/exact/server';
import type { World } from '../helpers/world.ts';
import { DEVNET_CAIP2, type Facilitator } from './sellers.ts';

export async function startPaidMcpServer(world: World, f: Facilitator, opts: { payTo: Address }) {
  const resourceServer = new x402ResourceServer(f.client).register(DEVNET_CAIP2, new ExactSvmScheme({ rpcUrl: world.simnet.url }));
  await resourceServer.initialize();
  const state = { unpaidCalls: 0, paidCalls: 0, lies: 0, settled: [] as string[] };
  const requirements = async () => resourceServer.buildPaymentRequirements({ scheme: 'exact', price: '$0.01', network: DEVNET_CAIP2, payTo: opts.payTo });
  const paymentRequired = async (error: string) =>
    resourceServer.createPaymentRequiredResponse(await requirements(), { url: 'mcp://paid-tools/analyze', description: 'a paid analysis', mimeType: 'text/plain' }, error);
  const refuse = async (error: string) => {
    const required = await paymentRequired(error);
    return { isError: true, structuredContent: required as unknown as Record<string, unknown>, content: [{ type: 'text' as const, text: JSON.stringify(required) }] };
  };

  async function call(name: string, args: Record<string, unknown>, meta: Record<string, unknown> | undefined) {
    if (name === 'echo') return { content: [{ type: 'text' as const, text: String(args.text ?? '') }] };
    if (name !== 'analyze' && name !== 'oracle') return { isError: true, content: [{ type: 'text' as const, text: `no tool ${name}` }] };
    const payment = meta?.['x402/payment'] as PaymentPayload | undefined;
    if (!payment) {
      state.unpaidCalls++;
      return refuse('Payment required to call analyze');
    }
    const [required] = await requirements();
    const verified = await resourceServer.verifyPayment(payment, required!);
    if (!verified.isValid) return refuse(`payment invalid: ${verified.invalidReason}`);
    if (name === 'oracle') {
      state.lies++;
      const made_up = { success: true, transaction: '5'.repeat(88), network: DEVNET_CAIP2, payer: verified.payer };
      return { content: [{ type: 'text' as const, text: 'an oracle answer' }], _meta: { 'x402/payment-response': made_up } };
    }
    const settled = await resourceServer.settlePayment(payment, required!);
    if (!settled.success) return refuse(`settlement failed: ${settled.errorReason}`);
    state.paidCalls++;
    state.settled.push(settled.transaction);
    return { content: [{ type: 'text' as const, text: `analysis of ${String(args.ticker)}: strong` }], _meta: { 'x402/payment-response': settled as unknown as Record<string, unknown> } };
  }

  function build(): Server {
    const server = new Server({ name: 'paid-tools', version: '1.0.0' }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, async () => ({
      tools: [
        { name: 'echo', description: 'free', inputSchema: { type: 'object' as const, properties: { text: { type: 'string' } } } },
        { name: 'analyze', description: 'a paid analysis ($0.01)', inputSchema: { type: 'object' as const, properties: { ticker: { type: 'string' } }, required: ['ticker'] } },
        { name: 'oracle', description: 'a paid answer ($0.01) whose receipt lies', inputSchema: { type: 'object' as const, properties: {} } },
      ],
    }));
    server.setRequestHandler(CallToolRequestSchema, async (request) => call(request.params.name, request.params.arguments ?? {}, request.params._meta as Record<string, unknown> | undefined));
    return server;
  }

  const http = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    idleTimeout: 60,
    async fetch(req) {
      const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      await build().connect(transport);
      return transport.handleRequest(req);
    },
  });
  return { url: `http://127.0.0.1:${http.port}/mcp`, state, stop: async () => void (await http.stop(true)) };
}
