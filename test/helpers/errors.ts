import { ApiError } from '../../src/client/api.ts';

/** The ApiError a call fails with; any other outcome fails the test. */
export async function errorOf(p: Promise<unknown>): Promise<ApiError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  throw new Error('expected an ApiError');
}
