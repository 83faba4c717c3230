import { Injectable } from '@nestjs/common';
import { GatewayError } from '@gateway/errors';
// Types only: prom-client itself is required on first use (below).
import type { Counter, Histogram } from 'prom-client';

/** Seconds; from a cached verification (sub-millisecond) to a long export download. */
const LATENCY_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];

export type TransferDirection = 'upload' | 'download';

/**
 * Every Prometheus metric of one gateway, in a registry of its own (not prom-client's global
 * one: tests run several gateways in one process). Created only when GATEWAY_METRICS_PORT is set;
 * the places that report hold it as optional and do nothing without it.
 */
@Injectable()
export class GatewayMetrics {
  /**
   * Required here, not at the top: this class is imported by every service that reports (as an
   * injection token), and prom-client is ~2.3 MB of idle RSS a gateway without a metrics port
   * never uses (issue 16).
   */
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- required on first use, not at load: idle RSS (issue 16)
  private readonly prom = require('prom-client') as typeof import('prom-client');
  readonly registry = new this.prom.Registry();

  private readonly requests = this.counter('gateway_http_requests_total', 'HTTP requests answered, by method, route template and status.', ['method', 'route', 'status']);
  private readonly latency = this.histogram(
    'gateway_http_request_duration_seconds',
    'Time from the request to the last byte of the answer, by method, route template and status.',
    ['method', 'route', 'status'],
  );
  private readonly bytesIn = this.counter('gateway_http_received_bytes_total', 'Bytes received on the sockets (headers and bodies), by route template.', ['route']);
  private readonly bytesOut = this.counter(
    'gateway_http_sent_bytes_total',
    'Bytes sent on the sockets (headers and bodies), by route template. Offloaded downloads are sent by the proxy and not counted.',
    ['route'],
  );
  private readonly transfers = new this.prom.Gauge({
    name: 'gateway_active_transfers',
    help: 'File uploads and downloads in progress.',
    labelNames: ['direction'] as const,
    registers: [this.registry],
  });
  private readonly exports = this.counter('gateway_exports_total', 'Background exports (batch zips) ended on this node, by outcome.', ['outcome']);
  private readonly jobDocuments = this.counter('gateway_job_documents_total', 'Documents handled by job runs on this node, by outcome (written, error, duplicate, skipped).', ['outcome']);
  private readonly connectorCalls = this.counter(
    'gateway_connector_calls_total',
    'Calls to connector drivers, by connector, operation and outcome (ok or the typed error).',
    ['connector', 'operation', 'outcome'],
  );
  private readonly connectorLatency = this.histogram(
    'gateway_connector_call_duration_seconds',
    'Time a connector driver call took until it answered (for content reads: until the stream was open).',
    ['connector', 'operation', 'outcome'],
  );
  private readonly loginFailures = this.counter('gateway_login_failures_total', 'Requests with credentials refused with 401 (wrong user name or password).');
  private readonly lockedOut = this.counter('gateway_login_locked_out_total', 'Requests refused with 429 because their user and client address are locked out.');
  private readonly lockoutsStarted = this.counter('gateway_login_lockouts_total', 'Lock-outs of a user and client address this node started (the failure that reached the limit).');

  constructor() {
    this.prom.collectDefaultMetrics({ register: this.registry, prefix: 'gateway_' });
    this.transfers.set({ direction: 'upload' }, 0);
    this.transfers.set({ direction: 'download' }, 0);
  }

  request(method: string, route: string, status: number, seconds: number, bytesIn: number, bytesOut: number): void {
    const labels = { method, route, status: String(status) };
    this.requests.inc(labels);
    this.latency.observe(labels, seconds);
    if (bytesIn > 0) this.bytesIn.inc({ route }, bytesIn);
    if (bytesOut > 0) this.bytesOut.inc({ route }, bytesOut);
  }

  /** Counts a transfer as active; call the returned function once when it ends. */
  transferStarted(direction: TransferDirection): () => void {
    this.transfers.inc({ direction });
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      this.transfers.dec({ direction });
    };
  }

  exportEnded(outcome: 'ready' | 'failed' | 'stopped'): void {
    this.exports.inc({ outcome });
  }

  jobDocument(code: 'p' | 'e' | 'd' | 's'): void {
    this.jobDocuments.inc({ outcome: { p: 'written', e: 'error', d: 'duplicate', s: 'skipped' }[code] });
  }

  connectorCall(connector: string, operation: string, error: unknown, seconds: number): void {
    const labels = { connector, operation, outcome: outcomeOf(error) };
    this.connectorCalls.inc(labels);
    this.connectorLatency.observe(labels, seconds);
  }

  loginFailed(): void {
    this.loginFailures.inc();
  }

  loginLockedOut(): void {
    this.lockedOut.inc();
  }

  lockoutStarted(): void {
    this.lockoutsStarted.inc();
  }

  text(): Promise<string> {
    return this.registry.metrics();
  }

  private counter<Label extends string = never>(name: string, help: string, labelNames: readonly Label[] = []): Counter<Label> {
    return new this.prom.Counter({ name, help, labelNames, registers: [this.registry] });
  }

  private histogram<Label extends string>(name: string, help: string, labelNames: readonly Label[]): Histogram<Label> {
    return new this.prom.Histogram({ name, help, labelNames, buckets: LATENCY_BUCKETS, registers: [this.registry] });
  }
}

/** 'ok', the typed error's kind (not_found, upstream_unavailable...: a small fixed set), or 'error' for anything untyped. */
function outcomeOf(error: unknown): string {
  if (error === undefined) return 'ok';
  if (error instanceof GatewayError) return error.kind;
  return 'error';
}
