/**
 * Prometheus metrics in the text exposition format, hand-written (prom-client's default
 * collectors break under Bun). Labels are low-cardinality: endpoint, action, status. Besides the
 * counters kept here, sources added with `addSource` render their lines at scrape time (ledger
 * gauges, src/ops/ledger-metrics.ts).
 */

const BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** The actions whose success is the server's half of a FROST signing round (share, aggregate, verify, store). */
const SIGNING_ACTIONS = new Set(['frost_sign_complete', 'x402_sign_complete']);

interface Histogram {
  counts: number[];
  sum: number;
  count: number;
}

/** The series of one endpoint and action, found by two Map lookups instead of building label strings per request. */
interface Series {
  latency: Histogram;
  byStatus: Map<number, { value: number }>;
}

export class Metrics {
  /** Keyed by label text, in first-seen order (the exposition order); values shared with `series`. */
  private requests = new Map<string, { value: number }>();
  private latency = new Map<string, Histogram>();
  private series = new Map<string, Map<string, Series>>();
  private jobRuns = new Map<string, number>();
  private jobFailures = new Map<string, number>();
  private rpcCalls = new Map<string, number>();
  private signing: Histogram = { counts: BUCKETS.map(() => 0), sum: 0, count: 0 };
  private feePayerLamports: bigint | null = null;
  private sources: (() => string[] | Promise<string[]>)[] = [];

  /** Records one API request. Unknown action names are folded into "unknown" to bound cardinality. */
  request(endpoint: string, action: string, status: number, seconds: number): void {
    const series = this.seriesOf(endpoint, action);
    let counter = series.byStatus.get(status);
    if (!counter) {
      counter = { value: 0 };
      series.byStatus.set(status, counter);
      this.requests.set(`endpoint="${endpoint}",action="${action}",status="${status}"`, counter);
    }
    counter.value++;
    observe(series.latency, seconds);
    if (status === 200 && SIGNING_ACTIONS.has(action)) observe(this.signing, seconds);
  }

  /** The fee payer's SOL balance, as the fee payer watch last read it. */
  setFeePayerLamports(lamports: bigint): void {
    this.feePayerLamports = lamports;
  }

  /** Lines computed at scrape time, appended to the exposition text. */
  addSource(source: () => string[] | Promise<string[]>): void {
    this.sources.push(source);
  }

  private seriesOf(endpoint: string, action: string): Series {
    let byAction = this.series.get(endpoint);
    if (!byAction) {
      byAction = new Map();
      this.series.set(endpoint, byAction);
    }
    let series = byAction.get(action);
    if (!series) {
      const latency = { counts: BUCKETS.map(() => 0), sum: 0, count: 0 };
      this.latency.set(`endpoint="${endpoint}",action="${action}"`, latency);
      series = { latency, byStatus: new Map() };
      byAction.set(action, series);
    }
    return series;
  }

  /** Records one run of a scheduled job. */
  job(name: string, ok: boolean): void {
    const key = `job="${name}"`;
    this.jobRuns.set(key, (this.jobRuns.get(key) ?? 0) + 1);
    if (!ok) this.jobFailures.set(key, (this.jobFailures.get(key) ?? 0) + 1);
  }

  /** Records one RPC attempt to the Solana provider (methods are a fixed set, so labels stay bounded). */
  rpcCall(method: string, outcome: string): void {
    const key = `method="${method}",outcome="${outcome}"`;
    this.rpcCalls.set(key, (this.rpcCalls.get(key) ?? 0) + 1);
  }

  /** The exposition text. */
  async render(): Promise<string> {
    const lines: string[] = [];
    lines.push('# HELP agent_wallet_requests_total API requests by endpoint, action and HTTP status.');
    lines.push('# TYPE agent_wallet_requests_total counter');
    for (const [k, v] of this.requests) lines.push(`agent_wallet_requests_total{${k}} ${v.value}`);
    lines.push('# HELP agent_wallet_request_duration_seconds API request latency.');
    lines.push('# TYPE agent_wallet_request_duration_seconds histogram');
    for (const [k, h] of this.latency) {
      BUCKETS.forEach((b, i) => lines.push(`agent_wallet_request_duration_seconds_bucket{${k},le="${b}"} ${h.counts[i]}`));
      lines.push(`agent_wallet_request_duration_seconds_bucket{${k},le="+Inf"} ${h.count}`);
      lines.push(`agent_wallet_request_duration_seconds_sum{${k}} ${h.sum}`);
      lines.push(`agent_wallet_request_duration_seconds_count{${k}} ${h.count}`);
    }
    lines.push('# HELP agent_wallet_job_runs_total Scheduled job runs.');
    lines.push('# TYPE agent_wallet_job_runs_total counter');
    for (const [k, v] of this.jobRuns) lines.push(`agent_wallet_job_runs_total{${k}} ${v}`);
    lines.push('# HELP agent_wallet_job_failures_total Scheduled job runs that failed.');
    lines.push('# TYPE agent_wallet_job_failures_total counter');
    for (const [k, v] of this.jobFailures) lines.push(`agent_wallet_job_failures_total{${k}} ${v}`);
    lines.push('# HELP agent_wallet_rpc_calls_total Solana RPC attempts by method and outcome (rate_limited: the provider answered 429; budget_exhausted: solana.rpc_max_rps left no room before the deadline).');
    lines.push('# TYPE agent_wallet_rpc_calls_total counter');
    for (const [k, v] of this.rpcCalls) lines.push(`agent_wallet_rpc_calls_total{${k}} ${v}`);
    lines.push('# HELP agent_wallet_signing_seconds Server side of a FROST signing round (share, aggregate, verify, store).');
    lines.push('# TYPE agent_wallet_signing_seconds histogram');
    BUCKETS.forEach((b, i) => lines.push(`agent_wallet_signing_seconds_bucket{le="${b}"} ${this.signing.counts[i]}`));
    lines.push(`agent_wallet_signing_seconds_bucket{le="+Inf"} ${this.signing.count}`);
    lines.push(`agent_wallet_signing_seconds_sum ${this.signing.sum}`);
    lines.push(`agent_wallet_signing_seconds_count ${this.signing.count}`);
    if (this.feePayerLamports !== null) {
      lines.push('# HELP agent_wallet_fee_payer_lamports SOL (lamports) of the fee payer that pays every fee and rent.');
      lines.push('# TYPE agent_wallet_fee_payer_lamports gauge');
      lines.push(`agent_wallet_fee_payer_lamports ${this.feePayerLamports}`);
    }
    for (const source of this.sources) lines.push(...(await source()));
    return `${lines.join('\n')}\n`;
  }
}

function observe(h: Histogram, seconds: number): void {
  for (let i = 0; i < BUCKETS.length; i++) if (seconds <= BUCKETS[i]!) h.counts[i]!++;
  h.sum += seconds;
  h.count++;
}
