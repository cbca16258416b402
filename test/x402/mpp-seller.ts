/**
 * An MPP seller built from the spec (tempoxyz/mpp-specs draft-httpauth-payment-00 and
 * draft-solana-charge-00; `mppx` 0.11, the official SDK, has no Solana method): `GET /charge`
 * answers 402 with a `WWW-Authenticate: Payment` Solana charge whose fee it sponsors (feePayer);
 * a request carrying the `Authorization: Payment` credential is checked against the stored
 * challenge, co-signed with the fee payer key, sent to simnet, and — once confirmed — verified on
 * chain (the recipient's token account credited with the amount) before it answers 200 with a
 * `Payment-Receipt`. A consumed signature is refused. Written independently of src/x402/mpp.ts.
 */
import {
  createSolanaRpc,
  generateKeyPairSigner,
  getBase58Decoder,
  getBase64EncodedWireTransaction,
  getBase64Encoder,
  getTransactionDecoder,
  partiallySignTransaction,
  type Address,
} from '@solana/kit';
import { usdcAta } from '../../src/solana/ata.ts';
import type { World } from '../helpers/world.ts';
import { USDC } from './sellers.ts';

/** RFC 8785, enough for these objects: keys sorted, no whitespace. */
function jcs(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(jcs).join(',')}]`;
  if (v && typeof v === 'object') {
    return `{${Object.keys(v)
      .sort()
      .filter((k) => (v as Record<string, unknown>)[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${jcs((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v);
}
const b64url = (v: unknown) => Buffer.from(jcs(v)).toString('base64url');
const fromB64url = (s: string) => JSON.parse(Buffer.from(s, 'base64url').toString('utf8'));

export interface MppSeller {
  url: string;
  feePayer: Address;
  state: { challenges: number; verified: string[]; refused: string[]; feePayerSponsors: boolean };
  stop(): Promise<void>;
}

export async function startMppSeller(world: World, opts: { payTo: Address; amount: string; externalId?: string }): Promise<MppSeller> {
  const signer = await generateKeyPairSigner();
  await world.simnet.airdrop(signer.address, 2_000_000_000n);
  const rpc = createSolanaRpc(world.simnet.url);
  const challenges = new Map<string, Record<string, string>>();
  const consumed = new Set<string>();
  const state = { challenges: 0, verified: [] as string[], refused: [] as string[], feePayerSponsors: true };
  const refuse = (why: string) => {
    state.refused.push(why);
    return Response.json({ type: 'https://paymentauth.org/problems/verification-failed', title: why }, { status: 402 });
  };

  async function paid(credential: string): Promise<Response> {
    const token = fromB64url(credential) as { challenge: Record<string, string>; payload: { type: string; transaction?: string } };
    const stored = challenges.get(token.challenge?.id ?? '');
    if (!stored) return refuse('unknown challenge');
    for (const [k, v] of Object.entries(stored)) if (token.challenge[k] !== v) return refuse(`challenge field ${k} differs`);
    if (token.payload?.type !== 'transaction' || !token.payload.transaction) return refuse('pull mode only');
    const request = fromB64url(stored.request!) as { amount: string; recipient: Address; methodDetails: { feePayerKey: string } };
    const tx = getTransactionDecoder().decode(getBase64Encoder().encode(token.payload.transaction));
    // The fee payer (the first signer) must be ours; we sign only as fee payer.
    if (Object.keys(tx.signatures)[0] !== request.methodDetails.feePayerKey) return refuse('fee payer is not ours');
    const signed = await partiallySignTransaction([signer.keyPair], tx);
    const signature = getBase58Decoder().decode(signed.signatures[signer.address]!);
    if (consumed.has(signature)) return refuse('transaction already consumed');
    await rpc.sendTransaction(getBase64EncodedWireTransaction(signed as never), { encoding: 'base64' }).send();
    const deadline = Date.now() + 20_000;
    for (;;) {
      const { value } = await rpc.getSignatureStatuses([signature as never]).send();
      if (value[0]?.confirmationStatus === 'confirmed' || value[0]?.confirmationStatus === 'finalized') break;
      if (Date.now() > deadline) return refuse('not confirmed');
      await Bun.sleep(50);
    }
    // Verified on chain, after the fact: the recipient's token account got exactly the amount.
    const transfers = await world.services.chain.getTokenTransfersOf(signature);
    const ata = await usdcAta(request.recipient, world.simnet.mint);
    if (!transfers?.deltas.some((d) => d.account === ata && d.delta === BigInt(request.amount))) return refuse('transfer not found on chain');
    consumed.add(signature);
    state.verified.push(signature);
    return Response.json(
      { content: 'paid through MPP' },
      { headers: { 'Payment-Receipt': b64url({ status: 'success', method: 'solana', timestamp: new Date().toISOString(), reference: signature }) } },
    );
  }

  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    idleTimeout: 60,
    async fetch(req) {
      const auth = req.headers.get('authorization');
      if (auth?.startsWith('Payment ')) return paid(auth.slice('Payment '.length).trim());
      const id = crypto.randomUUID().replaceAll('-', '');
      const request = {
        amount: opts.amount,
        currency: USDC,
        recipient: opts.payTo,
        description: 'an MPP-paid answer',
        ...(opts.externalId ? { externalId: opts.externalId } : {}),
        methodDetails: { network: 'devnet', decimals: 6, tokenProgram: 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA', ...(state.feePayerSponsors ? { feePayer: true, feePayerKey: signer.address } : {}) },
      };
      const params = { id, realm: '127.0.0.1', method: 'solana', intent: 'charge', request: b64url(request), expires: new Date(Date.now() + 300_000).toISOString() };
      challenges.set(id, params);
      state.challenges++;
      const header = `Payment ${Object.entries(params).map(([k, v]) => `${k}="${v}"`).join(', ')}`;
      return Response.json({ title: 'Payment Required' }, { status: 402, headers: { 'WWW-Authenticate': header } });
    },
  });
  return { url: `http://127.0.0.1:${server.port}`, feePayer: signer.address, state, stop: async () => void (await server.stop(true)) };
}
