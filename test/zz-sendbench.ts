import { generateKeyPairSigner } from '@solana/kit';
import { Chain } from '/work/main/src/simnet/chain.ts';
import { Faucet } from '/work/main/src/simnet/faucet.ts';
import { decodeWire, decodeEncoded } from '/work/main/src/simnet/wire.ts';
import { signedUsdcTransfer } from './simnet/helpers.ts';
const chain = Chain.create(Date.now());
const faucet = await Faucet.load(); faucet.genesis(chain);
const a = await generateKeyPairSigner();
const b = await generateKeyPairSigner();
await faucet.fund(chain, a.address, 1_000_000_000n, 1_000_000_000n);
await faucet.fund(chain, b.address, 1n, 1_000_000_000n);
const N = Number(process.argv[2] ?? 2000);
const wires: string[] = [];
for (let i = 0; i < N; i++) {
  if (i % 100 === 0) chain.tick(Date.now());
  wires.push((await signedUsdcTransfer(a, b.address, BigInt(i + 1), chain.latestBlockhash())).wire);
}
const t = performance.now();
let landed = 0;
for (const w of wires) {
  const r = chain.submit(decodeWire(decodeEncoded(w, 'base64')), { skipPreflight: false });
  if (r.status === 'landed') landed++;
}
console.log('per send ms', ((performance.now() - t) / N).toFixed(3), 'landed', landed);
