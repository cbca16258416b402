/**
 * Loopback-only JSON-RPC methods that drive a standalone simnet process the way
 * `Simnet.stats()` / `setCongestion()` / … drive an in-process one: read and reset the call
 * counters and switch faults. They pass every fault and are not counted; any other caller
 * gets -32601, as if they did not exist.
 */
import { faultsJson, FaultPatchError, parseFaultPatch } from './faults.ts';
import type { RpcContext } from './rpc.ts';
import { invalidParams, RpcError } from './rpc-error.ts';

type Handler = (params: unknown[], ctx: RpcContext) => unknown;

function loopbackOnly(handler: Handler): Handler {
  return (params, ctx) => {
    if (!ctx.loopback) throw new RpcError(-32601, 'Method not found');
    return handler(params, ctx);
  };
}

/** The control methods by name. */
export const CONTROL_METHODS: Readonly<Record<string, Handler>> = {
  /** → the counters (`SimnetStats`). */
  simnet_stats: loopbackOnly((_p, ctx) => ctx.stats.snapshot()),
  /** Zeroes the counters; → true. */
  simnet_resetStats: loopbackOnly((_p, ctx) => {
    ctx.stats.reset();
    return true;
  }),
  /** [{congestion_floor?, rate_limit_rps?, rate_limit_retry_after?, status_lag_slots?, mode?}] → every fault's setting after the change. */
  simnet_setFaults: loopbackOnly((p, ctx) => {
    try {
      return faultsJson(ctx.control.setFaults(parseFaultPatch(p[0])));
    } catch (e) {
      if (e instanceof FaultPatchError) throw invalidParams(e.message);
      throw e;
    }
  }),
};
