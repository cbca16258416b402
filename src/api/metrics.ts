/**
 * Prometheus metrics in the text exposition format, hand-written (prom-client's default
 * collectors break under Bun). Labels are low-cardinality: endpoint, action, status.
 */

const BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

interface Histogram {
  counts: number[];
  sum: number;
  count: number;
}

export class Metrics {
  private requests = new Map<string, number>();
  private latency = new Map<string, Histogram>();
  private jobRuns = new Map<string, number>();
  private jobFailures = new Map<string, number>();

  /** Records one API request. Unknown action names are folded into "unknown" to bound cardinality. */
  request(endpoint: string, action: string, status: number, seconds: number): void {
    const key = `endpoint="${endpoint}",action="${action}",status="${status}"`;
    this.requests.set(key, (this.requests.get(key) ?? 0) + 1);
    const lkey = `endpoint="${endpoint}",action="${action}"`;
    let h = this.latency.get(lkey);
    if (!h) {
      h = { counts: BUCKETS.map(() => 0), sum: 0, count: 0 };
      this.latency.set(lkey, h);
    }
    BUCKETS.forEach((b, i) => {
      if (seconds <= b) h.counts[i]!++;
    });
    h.sum += seconds;
    h.count++;
  }

  /** Records one run of a scheduled job. */
  job(name: string, ok: boolean): void {
    const key = `job="${name}"`;
    this.jobRuns.set(key, (this.jobRuns.get(key) ?? 0) + 1);
    if (!ok) this.jobFailures.set(key, (this.jobFailures.get(key) ?? 0) + 1);
  }

  /** The exposition text. */
  render(): string {
    const lines: string[] = [];
    lines.push('# HELP agent_wallet_requests_total API requests by endpoint, action and HTTP status.');
    lines.push('# TYPE agent_wallet_requests_total counter');
    for (const [k, v] of this.requests) lines.push(`agent_wallet_requests_total{${k}} ${v}`);
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
    return `${lines.join('\n')}\n`;
  }
}
