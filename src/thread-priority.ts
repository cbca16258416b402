/**
 * Lowers the CPU priority of the calling thread (Linux: a thread's nice value is its own, set
 * through its thread id). Background threads — the FROST workers — then yield the CPU to the event
 * loop whenever both are runnable, so a ping or a read is not queued behind curve arithmetic on a
 * busy machine; the work itself is not slowed when a core is free. Elsewhere it does nothing.
 */
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';

/** Nice 10: about a tenth of the CPU weight of a nice-0 thread when they compete. */
export const BACKGROUND_NICE = 10;

/** Returns whether the priority was lowered. */
export function lowerThreadPriority(nice = BACKGROUND_NICE): boolean {
  try {
    // "/proc/thread-self" links to "<pid>/task/<tid>".
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (!Number.isInteger(tid) || tid <= 0) return false;
    setPriority(tid, nice);
    return true;
  } catch {
    return false;
  }
}
