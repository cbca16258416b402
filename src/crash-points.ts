/**
 * Fault injection for the reliability suite: when AGENT_WALLET_CRASH_AT names a point, the
 * process kills itself with SIGKILL right there — a real crash, not a simulated one — so tests
 * can prove that every step resumes instead of repeating. Unset in production: a no-op.
 */
const target = process.env.AGENT_WALLET_CRASH_AT ?? '';

export type CrashPoint = 'intent_committed' | 'share_computed' | 'signed_stored' | 'broadcast_sent' | 'confirmation_seen' | 'completion_recorded' | 'paywall_settle_returned' | 'paywall_settled' | 'paywall_answer_kept';

export function crashPoint(point: CrashPoint): void {
  if (target === point) process.kill(process.pid, 'SIGKILL');
}
