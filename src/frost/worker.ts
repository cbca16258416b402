/**
 * A FROST worker thread (pool.ts): runs the jobs of sign-jobs.ts and answers each with its result,
 * or with the error's message when a job throws (sealed data that does not open, say).
 */
import { runJob, type FrostJob } from './sign-jobs.ts';

declare const self: Worker;

self.onmessage = (event: MessageEvent<{ id: number; job: FrostJob }>) => {
  const { id, job } = event.data;
  try {
    self.postMessage({ id, result: runJob(job) });
  } catch (err) {
    self.postMessage({ id, error: err instanceof Error ? err.message : String(err) });
  }
};
