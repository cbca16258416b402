/** Serialises envelopes. Every response body of the API goes through here. */
import type { ErrorEnvelope } from '../contract/errors.ts';
import { AppError } from '../errors.ts';
import { stringifyWithBigints } from '../domain/json.ts';

const SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const bigintValue = (v: bigint) => (v <= SAFE && v >= -SAFE ? Number(v) : v.toString());

/** JSON.stringify that renders bigint (SQLite safeIntegers) as a number when exact, else a string. */
export function toJson(value: unknown): string {
  return stringifyWithBigints(value, bigintValue);
}

export const JSON_TYPE = 'application/json; charset=utf-8';

export function jsonResponse(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(toJson(body), { status, headers: { 'Content-Type': JSON_TYPE, ...headers } });
}

/**
 * The success envelope. `headers` must already start with Content-Type (the dispatcher builds them
 * so): they are used as they are, because copying them costs as much as serialising a ping.
 */
export function successResponse(data: unknown, headers: Record<string, string>): Response {
  return new Response(toJson({ success: true, data }), { headers });
}

export function errorResponse(err: AppError, headers: Record<string, string> = {}): Response {
  const envelope: ErrorEnvelope = err.toEnvelope();
  return jsonResponse(err.status, envelope, { ...err.headers, ...headers });
}
