/**
 * The threads that do the server's FROST work (sign-jobs.ts) off the event loop: a payment's
 * curve arithmetic — about a millisecond and a half of it — no longer delays the pings, reads and
 * other payments the main thread serves meanwhile. One process-wide pool of `size` workers (one
 * less than the cores, at least one, at most four: the main thread keeps a core). A wallet's jobs
 * always go to the same worker, so its caches (validated points, the server's own commitments,
 * decoded keys) serve both rounds. Idle workers do not keep the process alive.
 */
import { availableParallelism } from 'node:os';
import type { FrostJob, ResultOf } from './sign-jobs.ts';

interface Pending {
  resolve: (result: never) => void;
  reject: (err: Error) => void;
}

/** Bun's Worker: the DOM type this project also loads lacks ref/unref. */
type BunWorker = Worker & { ref(): void; unref(): void };

interface Slot {
  worker: BunWorker;
  pending: Map<number, Pending>;
}

export class FrostPool {
  private readonly slots: (Slot | null)[];
  private nextId = 1;
  /** Jobs run so far (the bench and tests read it). */
  jobs = 0;

  constructor(readonly size: number) {
    this.slots = Array.from({ length: size }, () => null);
  }

  /** Runs `job` on the worker of `affinity` (a wallet id). Rejects when the job throws or the worker dies. */
  run<J extends FrostJob>(job: J, affinity: string): Promise<ResultOf<J>> {
    const slot = this.slot(indexOf(affinity, this.size));
    const id = this.nextId++;
    this.jobs++;
    return new Promise<ResultOf<J>>((resolve, reject) => {
      if (slot.pending.size === 0) slot.worker.ref();
      slot.pending.set(id, { resolve: resolve as (result: never) => void, reject });
      slot.worker.postMessage({ id, job });
    });
  }

  /** Stops every worker; jobs in flight are refused. */
  close(): void {
    for (const [i, slot] of this.slots.entries()) {
      if (!slot) continue;
      this.slots[i] = null;
      slot.worker.terminate();
      for (const p of slot.pending.values()) p.reject(new Error('the FROST worker pool was closed'));
    }
  }

  private slot(i: number): Slot {
    const existing = this.slots[i];
    if (existing) return existing;
    const worker = new Worker(new URL('./worker.ts', import.meta.url).href) as BunWorker;
    const slot: Slot = { worker, pending: new Map() };
    worker.unref();
    worker.onmessage = (event: MessageEvent<{ id: number; result?: unknown; error?: string }>) => {
      const { id, result, error } = event.data;
      const p = slot.pending.get(id);
      if (!p) return;
      slot.pending.delete(id);
      if (slot.pending.size === 0) worker.unref();
      if (error !== undefined) p.reject(new Error(error));
      else p.resolve(result as never);
    };
    // A worker that dies fails its jobs; the next job starts a new one.
    worker.onerror = (event: ErrorEvent) => {
      if (this.slots[i] === slot) this.slots[i] = null;
      worker.terminate();
      for (const p of slot.pending.values()) p.reject(new Error(`a FROST worker failed: ${event.message}`));
      slot.pending.clear();
    };
    this.slots[i] = slot;
    return slot;
  }
}

function indexOf(key: string, size: number): number {
  let h = 0;
  for (let i = 0; i < key.length; i++) h = (Math.imul(h, 31) + key.charCodeAt(i)) | 0;
  return Math.abs(h) % size;
}

/** The pool's default size: the cores less one for the event loop, between one and four. */
export function defaultPoolSize(): number {
  return Math.max(1, Math.min(4, availableParallelism() - 1));
}

let shared: FrostPool | null = null;

/** The process-wide pool, started on first use. */
export function frostPool(): FrostPool {
  shared ??= new FrostPool(defaultPoolSize());
  return shared;
}
