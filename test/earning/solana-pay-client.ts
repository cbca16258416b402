/**
 * A plain `@solana/kit` client standing in for a human's Solana Pay wallet (NOT the daemon's code):
 * it reads a Solana Pay transfer-request URL, then signs and sends a transferChecked from its own
 * keypair with the reference keys appended as read-only accounts, exactly as the Solana Pay spec
 * lays a payment out. It can also mint a token of its own, for wrong-mint payments.
 */
import {
  AccountRole,
  appendTransactionMessageInstructions,
  createSolanaRpc,
  createTransactionMessage,
  generateKeyPairSigner,
  getBase64EncodedWireTransaction,
  getSignatureFromTransaction,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  type Address,
  type Instruction,
  type KeyPairSigner,
} from '@solana/kit';
import { getCreateAccountInstruction } from '@solana-program/system';
import {
  findAssociatedTokenPda,
  getCreateAssociatedTokenIdempotentInstruction,
  getInitializeMint2Instruction,
  getMintToCheckedInstruction,
  getTransferCheckedInstruction,
  TOKEN_PROGRAM_ADDRESS,
} from '@solana-program/token';

/** The parts of `solana:<recipient>?amount=…&spl-token=…&reference=…&label=…&message=…`. */
export interface TransferRequest {
  recipient: Address;
  amount: string | null;
  splToken: Address | null;
  references: Address[];
  label: string | null;
  message: string | null;
}

export function parseSolanaPayUrl(url: string): TransferRequest {
  if (!url.startsWith('solana:')) throw new Error(`not a Solana Pay URL: ${url}`);
  const [recipient, query = ''] = url.slice('solana:'.length).split('?');
  const q = new URLSearchParams(query);
  return {
    recipient: recipient as Address,
    amount: q.get('amount'),
    splToken: q.get('spl-token') as Address | null,
    references: q.getAll('reference') as Address[],
    label: q.get('label'),
    message: q.get('message'),
  };
}

/** Decimal amount → base units (6 decimals), without floats. */
export function toBaseUnits(amount: string): bigint {
  const [whole, frac = ''] = amount.split('.');
  return BigInt(whole!) * 1_000_000n + BigInt(frac.padEnd(6, '0').slice(0, 6));
}

const ata = async (owner: Address, mint: Address) => (await findAssociatedTokenPda({ owner, mint, tokenProgram: TOKEN_PROGRAM_ADDRESS }))[0];

export class SolanaPayWallet {
  private constructor(
    readonly rpcUrl: string,
    readonly signer: KeyPairSigner,
  ) {}

  static async create(rpcUrl: string): Promise<SolanaPayWallet> {
    return new SolanaPayWallet(rpcUrl, await generateKeyPairSigner());
  }

  get address(): Address {
    return this.signer.address;
  }

  /** Signs with this wallet as fee payer (and the signers inside the instructions) and sends with preflight; resolves to the signature once the cluster knows it. */
  async send(instructions: Instruction[]): Promise<string> {
    const rpc = createSolanaRpc(this.rpcUrl);
    const { value: blockhash } = await rpc.getLatestBlockhash().send();
    const message = pipe(
      createTransactionMessage({ version: 0 }),
      (m) => setTransactionMessageFeePayerSigner(this.signer, m),
      (m) => setTransactionMessageLifetimeUsingBlockhash(blockhash, m),
      (m) => appendTransactionMessageInstructions(instructions, m),
    );
    const signed = await signTransactionMessageWithSigners(message);
    const signature = getSignatureFromTransaction(signed);
    await rpc.sendTransaction(getBase64EncodedWireTransaction(signed), { encoding: 'base64' }).send();
    for (let i = 0; i < 50; i++) {
      const { value } = await rpc.getSignatureStatuses([signature]).send();
      if (value[0]) {
        if (value[0].err) throw new Error(`transaction ${signature} failed: ${JSON.stringify(value[0].err, (_k, v) => (typeof v === 'bigint' ? Number(v) : v))}`);
        return signature;
      }
      await Bun.sleep(100);
    }
    throw new Error(`transaction ${signature} not seen`);
  }

  /**
   * Pays like a Solana Pay wallet: transferChecked of `amount` base units of `mint` from this
   * wallet's token account to ATA(recipient, mint), creating that account idempotently when asked,
   * with `references` appended to the transfer as read-only accounts.
   */
  async pay(p: { recipient: Address; mint: Address; amount: bigint; references: Address[]; createRecipientAccount?: boolean }): Promise<string> {
    const [source, destination] = await Promise.all([ata(this.address, p.mint), ata(p.recipient, p.mint)]);
    const transfer = getTransferCheckedInstruction({ source, mint: p.mint, destination, authority: this.signer, amount: p.amount, decimals: 6 });
    const withReferences: Instruction = { ...transfer, accounts: [...transfer.accounts, ...p.references.map((address) => ({ address, role: AccountRole.READONLY }))] };
    const instructions: Instruction[] = [];
    if (p.createRecipientAccount) instructions.push(getCreateAssociatedTokenIdempotentInstruction({ payer: this.signer, ata: destination, owner: p.recipient, mint: p.mint }));
    instructions.push(withReferences);
    return this.send(instructions);
  }

  /** Pays a Solana Pay transfer-request URL as it stands (amount override for open-amount requests or underpayment). */
  async payUrl(url: string, opts: { amount?: bigint } = {}): Promise<string> {
    const req = parseSolanaPayUrl(url);
    if (!req.splToken) throw new Error('only SPL token transfer requests are supported');
    const amount = opts.amount ?? (req.amount === null ? null : toBaseUnits(req.amount));
    if (amount === null) throw new Error('the request has no amount: pass one');
    return this.pay({ recipient: req.recipient, mint: req.splToken, amount, references: req.references });
  }

  /** Creates a mint of its own (6 decimals, this wallet as authority) and mints `amount` to itself. */
  async createToken(amount: bigint): Promise<Address> {
    const mint = await generateKeyPairSigner();
    const rpc = createSolanaRpc(this.rpcUrl);
    const rent = await rpc.getMinimumBalanceForRentExemption(82n).send();
    const mine = await ata(this.address, mint.address);
    await this.send([
      getCreateAccountInstruction({ payer: this.signer, newAccount: mint, lamports: rent, space: 82, programAddress: TOKEN_PROGRAM_ADDRESS }),
      getInitializeMint2Instruction({ mint: mint.address, decimals: 6, mintAuthority: this.address }),
      getCreateAssociatedTokenIdempotentInstruction({ payer: this.signer, ata: mine, owner: this.address, mint: mint.address }),
      getMintToCheckedInstruction({ mint: mint.address, token: mine, mintAuthority: this.signer, amount, decimals: 6 }),
    ]);
    return mint.address;
  }
}
