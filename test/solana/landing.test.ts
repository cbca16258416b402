import { describe, expect, it } from 'bun:test';
import { ed25519_FROST } from '@noble/curves/ed25519.js';
import {
  generateKeyPairSigner,
  getBase58Decoder,
  getAddressDecoder,
  getTransactionDecoder,
  lamports,
  none,
  signBytes,
  some,
  type Address,
  type KeyPairSigner,
} from '@solana/kit';
import { AccountState, TOKEN_PROGRAM_ADDRESS, getMintEncoder, getTokenDecoder, getTokenEncoder } from '@solana-program/token';
import { FailedTransactionMetadata, LiteSVM } from 'litesvm';
import { usdcAta } from '../../src/solana/ata.ts';
import { checkTransfer, checkX402Transfer } from '../../src/solana/decode.ts';
import { DEVNET_USDC, USDC_DECIMALS } from '../../src/solana/networks.ts';
import { assembleSignedTransaction, buildUsdcTransfer, buildX402Transfer, transactionSignature } from '../../src/solana/transfer.ts';
import { randomAddress } from './helpers.ts';

const AGENT = ed25519_FROST.Identifier.fromNumber(1);
const SERVER = ed25519_FROST.Identifier.fromNumber(2);

/** A 2-of-2 FROST wallet from a trusted dealer: its address is the group key, no party holds the key. */
function frostWallet() {
  const dealt = ed25519_FROST.trustedDealer({ min: 2, max: 2 }, [AGENT, SERVER]);
  const address = getAddressDecoder().decode(dealt.public.commitments[0]!);
  /** One signing round between the two participants: commit, sign shares, aggregate. */
  const sign = (message: Uint8Array): Uint8Array => {
    const agent = dealt.secretShares[AGENT]!;
    const server = dealt.secretShares[SERVER]!;
    const a = ed25519_FROST.commit(agent);
    const s = ed25519_FROST.commit(server);
    const list = [a.commitments, s.commitments];
    const shares = {
      [AGENT]: ed25519_FROST.signShare(agent, dealt.public, a.nonces, list, message),
      [SERVER]: ed25519_FROST.signShare(server, dealt.public, s.nonces, list, message),
    };
    return ed25519_FROST.aggregate(dealt.public, list, message, shares);
  };
  return { address, sign };
}

/** A LiteSVM chain with a fake USDC mint at the devnet address. */
function chain() {
  const svm = new LiteSVM();
  const mintData = getMintEncoder().encode({
    mintAuthority: some(randomAddress()), supply: 1_000_000_000_000n, decimals: USDC_DECIMALS, isInitialized: true, freezeAuthority: none(),
  });
  svm.setAccount({
    address: DEVNET_USDC, data: new Uint8Array(mintData), executable: false,
    lamports: lamports(svm.minimumBalanceForRentExemption(BigInt(mintData.length))), programAddress: TOKEN_PROGRAM_ADDRESS, space: BigInt(mintData.length),
  });
  const fund = async (owner: Address, amount: bigint) => {
    const data = getTokenEncoder().encode({
      mint: DEVNET_USDC, owner, amount, delegate: none(), state: AccountState.Initialized, isNative: none(), delegatedAmount: 0n, closeAuthority: none(),
    });
    svm.setAccount({
      address: await usdcAta(owner, DEVNET_USDC), data: new Uint8Array(data), executable: false,
      lamports: lamports(svm.minimumBalanceForRentExemption(BigInt(data.length))), programAddress: TOKEN_PROGRAM_ADDRESS, space: BigInt(data.length),
    });
  };
  const balance = async (owner: Address): Promise<bigint | null> => {
    const account = svm.getAccount(await usdcAta(owner, DEVNET_USDC));
    return account.exists ? getTokenDecoder().decode(account.data).amount : null;
  };
  const payer = async (): Promise<KeyPairSigner> => {
    const signer = await generateKeyPairSigner();
    svm.airdrop(signer.address, lamports(1_000_000_000n));
    return signer;
  };
  const blockhash = () => ({ blockhash: svm.latestBlockhash(), lastValidBlockHeight: 150n });
  const send = (wire: Uint8Array) => {
    const result = svm.sendTransaction(getTransactionDecoder().decode(wire));
    if (result instanceof FailedTransactionMetadata) throw new Error(`transaction failed: ${result.toString()}`);
    return result;
  };
  return { svm, fund, balance, payer, blockhash, send };
}

describe('a FROST-signed transfer on LiteSVM', () => {
  it('lands and moves exactly amount to the recipient and fee to the treasury, creating the recipient account', async () => {
    const c = chain();
    const wallet = frostWallet();
    const feePayer = await c.payer();
    const recipient = randomAddress();
    const treasury = randomAddress();
    await c.fund(wallet.address, 20_000_000n);
    await c.fund(treasury, 0n);

    const intent = { wallet: wallet.address, mint: DEVNET_USDC, recipientOwner: recipient, amount: 12_500_000n, treasuryOwner: treasury, feePayer: feePayer.address };
    const { messageBytes } = await buildUsdcTransfer({ ...intent, fee: 62_500n, createRecipientAta: true, memo: 'test', blockhash: c.blockhash() });
    expect(await checkTransfer(messageBytes, { ...intent, maxFee: 62_500n })).toEqual({ ok: true });

    const wire = assembleSignedTransaction(messageBytes, {
      [feePayer.address]: await signBytes(feePayer.keyPair.privateKey, messageBytes),
      [wallet.address]: wallet.sign(messageBytes),
    });
    const landed = c.send(wire);
    expect(transactionSignature(wire)).toBe(getBase58Decoder().decode(landed.signature()));

    expect(await c.balance(recipient)).toBe(12_500_000n);
    expect(await c.balance(treasury)).toBe(62_500n);
    expect(await c.balance(wallet.address)).toBe(20_000_000n - 12_500_000n - 62_500n);
  });

  it("is refused by the runtime when the wallet's slot holds a signature not made with the group key", async () => {
    const c = chain();
    const wallet = frostWallet();
    const feePayer = await c.payer();
    const recipient = randomAddress();
    await c.fund(wallet.address, 1_000n);
    await c.fund(recipient, 0n);
    const { messageBytes } = await buildUsdcTransfer({
      wallet: wallet.address, mint: DEVNET_USDC, recipientOwner: recipient, amount: 1_000n, fee: 0n, treasuryOwner: recipient,
      feePayer: feePayer.address, createRecipientAta: false, blockhash: c.blockhash(),
    });
    const forged = assembleSignedTransaction(messageBytes, {
      [feePayer.address]: await signBytes(feePayer.keyPair.privateKey, messageBytes),
      [wallet.address]: await signBytes(feePayer.keyPair.privateKey, messageBytes),
    });
    expect(() => c.send(forged)).toThrow('transaction failed');
    expect(await c.balance(wallet.address)).toBe(1_000n);
  });
});

describe('a FROST-signed x402 payment on LiteSVM', () => {
  it('lands with a separate facilitator fee payer and pays exactly the required amount', async () => {
    const c = chain();
    const wallet = frostWallet();
    const facilitator = await c.payer();
    const payTo = randomAddress();
    await c.fund(wallet.address, 50_000n);
    await c.fund(payTo, 0n);
    const requirement = { wallet: wallet.address, mint: DEVNET_USDC, payTo, amount: 10_000n, feePayer: facilitator.address };
    const { messageBytes } = await buildX402Transfer({ ...requirement, memo: 'x402-nonce', blockhash: c.blockhash() });
    expect(await checkX402Transfer(messageBytes, requirement)).toEqual({ ok: true });

    const partial = assembleSignedTransaction(messageBytes, { [wallet.address]: wallet.sign(messageBytes) });
    const facilitatorSig = await signBytes(facilitator.keyPair.privateKey, messageBytes);
    const complete = new Uint8Array(partial);
    complete.set(facilitatorSig, 1);
    c.send(complete);

    expect(await c.balance(payTo)).toBe(10_000n);
    expect(await c.balance(wallet.address)).toBe(40_000n);
  });
});
