/**
 * A FROST worker thread (pool.ts): runs the jobs of sign-jobs.ts and answers each with its result,
 * or with the error's message when a job throws (sealed data that does not open, say).
 */
import { lowerThreadPriority } from '../thread-priority.ts';
import { runJob, type FrostJob } from './sign-jobs.ts';

declare const self: Worker;

// The event loop comes first when both want a core (src/thread-priority.ts).
lowerThreadPriority();

self.onmessage = (event: MessageEvent<{ id: number; job: FrostJob }>) => {
  const { id, job } = event.data;
  try {
    self.postMessage({ id, result: runJob(job) });
  } catch (err) {
    self.postMessage({ id, error: err instanceof Error ? err.message : String(err) });
  }
};
