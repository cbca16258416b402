/**
 * The owner's side of the recovery share, run on the owner's own machine (DESIGN §4.1):
 *   owner recovery start WALLET_ID                       an enrollment code to hand to the agent's machine
 *   owner recovery finish ENROLLMENT_ID --out FILE       collect, check and combine both reports; write the kit
 *   owner recovery status WALLET_ID                      enrolled or not, fingerprint and date
 *   owner recovery allow-refresh WALLET_ID               let one key refresh supersede the kit within the hour
 *   owner recover sweep --kit FILE --to ADDRESS          announce a sweep (the agent's key is revoked), or sign it after the delay
 *   owner recover cancel SWEEP_ID                        cancel a sweep not signed yet
 *   owner recover status WALLET_ID                       the wallet's sweeps
 * The kit passphrase comes from AGENT_WALLET_KIT_PASSPHRASE or is typed (never a flag).
 */
import { ApiClient, ApiError } from '../client/api.ts';
import { OwnerEnrollmentStore, ownerFinishEnrollment, ownerStartEnrollment } from '../client/recovery-enroll.ts';
import { readKit } from '../client/recovery-kit.ts';
import { announceSweep, liveSweepOf, signSweep } from '../client/recovery-owner-sweep.ts';
import { commandFlags, type CliContext } from './context.ts';
import { EXIT, printData, progress } from './output.ts';
import { readSecret } from './secret-input.ts';
import { UsageError } from './usage.ts';

type Command = (ctx: CliContext) => Promise<number>;

/** The owner's API client: --owner-token, else AGENT_WALLET_OWNER_TOKEN. */
export function ownerApi(ctx: CliContext): ApiClient {
  const token = (ctx.flags['owner-token'] as string | undefined) ?? process.env.AGENT_WALLET_OWNER_TOKEN;
  if (!token) throw new UsageError('owner commands need an owner API token: --owner-token or AGENT_WALLET_OWNER_TOKEN (mint one on the dashboard, /dashboard/tokens)');
  return new ApiClient(ctx.server, token);
}

function store(ctx: CliContext): OwnerEnrollmentStore {
  return new OwnerEnrollmentStore(ctx.store.home);
}

export const OWNER_RECOVERY_COMMANDS: Record<string, Command> = {
  start: async (ctx) => {
    const { positional } = commandFlags(ctx, {});
    const started = await ownerStartEnrollment(ownerApi(ctx), store(ctx), positional[0]!);
    printData(
      ctx,
      started,
      `Enrollment ${started.enrollment_id} for ${started.address}, until ${started.expires_at}.\nHand this code to the agent's machine yourself (not through the service):\n\n  ${started.code}\n\nThere: agent-wallet recovery enroll ${started.code}\nThen here: agent-wallet owner recovery finish ${started.enrollment_id} --out kit.json`,
    );
    return EXIT.ok;
  },

  finish: async (ctx) => {
    const { flags, positional } = commandFlags(ctx, { out: 'string', wait: 'string' });
    if (!flags.out) throw new UsageError('--out FILE is required: where to write the kit');
    const waitS = flags.wait === undefined ? 0 : Number(flags.wait);
    if (!Number.isFinite(waitS) || waitS < 0 || waitS > 3600) throw new UsageError('--wait takes seconds from 0 to 3600');
    const api = ownerApi(ctx);
    const id = positional[0]!;
    // Until the agent's report has arrived, look again every 2 s within --wait.
    const deadline = Date.now() + waitS * 1000;
    for (;;) {
      try {
        await api.call('owner', 'recovery_enroll_collect', { enrollment_id: id });
        break;
      } catch (err) {
        if (!(err instanceof ApiError && err.errorCode === 'INVALID_STATUS' && /is (open|split)/.test(err.message)) || Date.now() >= deadline) throw err;
        progress(ctx, "waiting for the agent's half (agent-wallet recovery enroll CODE on the agent's machine)");
        await Bun.sleep(2000);
      }
    }
    const passphrase = await readSecret('AGENT_WALLET_KIT_PASSPHRASE', 'Kit passphrase (12+ characters): ', { confirm: true });
    progress(ctx, 'checking both reports against the key and writing the kit');
    const done = await ownerFinishEnrollment(api, store(ctx), id, { passphrase, out: flags.out });
    printData(ctx, done, `Recovery kit written to ${done.kit}.\nFingerprint ${done.fingerprint}: the dashboard shows the same for this wallet. Keep the kit and its passphrase apart, offline.`);
    return EXIT.ok;
  },

  status: async (ctx) => {
    const { positional } = commandFlags(ctx, {});
    const s = await ownerApi(ctx).call<{ enrolled: boolean; fingerprint: string | null; enrolled_at: string | null }>('owner', 'recovery_status', { wallet_id: positional[0]! });
    printData(ctx, s, s.enrolled ? `Kit enrolled ${s.enrolled_at}, fingerprint ${s.fingerprint}.` : 'No kit enrolled.');
    return EXIT.ok;
  },

  'allow-refresh': async (ctx) => {
    const { positional } = commandFlags(ctx, {});
    const allowed = await ownerApi(ctx).call<{ next_step: string }>('owner', 'recovery_refresh_allow', { wallet_id: positional[0]! });
    printData(ctx, allowed, allowed.next_step);
    return EXIT.ok;
  },
};

export const OWNER_RECOVER_COMMANDS: Record<string, Command> = {
  sweep: async (ctx) => {
    const { flags } = commandFlags(ctx, { kit: 'string', to: 'string' });
    if (!flags.kit || !flags.to) throw new UsageError('--kit FILE and --to ADDRESS are required');
    const api = ownerApi(ctx);
    const kit = readKit(flags.kit);
    const live = await liveSweepOf(api, kit.wallet_id);
    if (!live) {
      const announced = await announceSweep(api, kit.wallet_id, flags.to);
      printData(
        ctx,
        announced,
        `Sweep ${announced.sweep_id} announced: the agent's API key is revoked. Run this command again after ${announced.executes_at} to sign it; cancel it before then with agent-wallet owner recover cancel ${announced.sweep_id}. If you cancel, give the agent a key again with agent-wallet owner rotate-key ${kit.wallet_id}.`,
      );
      return EXIT.awaitingApproval;
    }
    if (live.to_address !== flags.to) throw new UsageError(`sweep ${live.sweep_id} of this wallet goes to ${live.to_address}; cancel it first to sweep to ${flags.to}`);
    if (live.transaction?.status === 'pending') {
      printData(ctx, live, `Sweep ${live.sweep_id} is signed and sent; see its outcome with agent-wallet owner recover status ${kit.wallet_id}.`);
      return EXIT.ok;
    }
    if (!live.signable) {
      printData(ctx, live, `Sweep ${live.sweep_id} may be signed from ${live.executes_at} on (by the daemon's clock).`);
      return EXIT.awaitingApproval;
    }
    const passphrase = await readSecret('AGENT_WALLET_KIT_PASSPHRASE', 'Kit passphrase: ');
    const done = await signSweep(api, kit, passphrase, live, (s) => progress(ctx, s));
    printData(ctx, done, `Sweep ${String(done.status)}.`);
    return done.status === 'completed' || done.status === 'pending' ? EXIT.ok : EXIT.error;
  },

  cancel: async (ctx) => {
    const { positional } = commandFlags(ctx, {});
    const cancelled = await ownerApi(ctx).call<{ wallet_id: string }>('owner', 'recovery_sweep_cancel', { sweep_id: positional[0]! });
    printData(ctx, cancelled, `Sweep cancelled: nothing moves. The agent's API key stays revoked: give it a new one with agent-wallet owner rotate-key ${cancelled.wallet_id} to let it work again.`);
    return EXIT.ok;
  },

  status: async (ctx) => {
    const { positional } = commandFlags(ctx, {});
    const data = await ownerApi(ctx).call<{ items: (Record<string, unknown> & { transaction: Record<string, unknown> | null })[] }>('owner', 'recovery_sweeps', { wallet_id: positional[0]! });
    // A row says which sweep, from when it may be signed, where the balance goes, and its transaction.
    const rows = ctx.json
      ? data
      : { ...data, items: data.items.map(({ transaction: tx, ...s }) => ({ ...s, transaction_id: tx?.transaction_id, transaction_status: tx?.status, amount: tx?.amount, signature: tx?.signature })) };
    printData(ctx, rows, undefined, ['sweep_id', 'status', 'executes_at', 'signable', 'to_address', 'transaction_id', 'transaction_status', 'amount', 'signature']);
    return EXIT.ok;
  },
};
