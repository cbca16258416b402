/**
 * Asks a simnet's faucet (JSON-RPC `simnet_faucet`, loopback callers only) for `micro` USDC and,
 * optionally, `lamports` of SOL to `owner`; resolves to the faucet transaction's signature. The one
 * client of it: the fund and checkout pages' test payer, `admin faucet`, and the benches.
 */
export async function simnetFaucet(rpcUrl: string, owner: string, micro: bigint, lamports?: bigint): Promise<string> {
  const res = await fetch(rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'simnet_faucet', params: [owner, micro.toString(), ...(lamports === undefined ? [] : [lamports.toString()])] }),
    signal: AbortSignal.timeout(10_000),
  });
  const body = (await res.json()) as { result?: string; error?: { message?: string } };
  if (body.error || typeof body.result !== 'string') throw new Error(`simnet faucet refused: ${body.error?.message ?? `HTTP ${res.status}`}`);
  return body.result;
}
