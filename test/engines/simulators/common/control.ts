/**
 * The tests' client of a simulator's control routes (/_simulator/*, see faults.ts): set and clear
 * fault switches, read the request log.
 */
import * as fs from 'node:fs';
import * as https from 'node:https';
import type { FaultSwitches, LoggedRequest } from './faults';

export class SimulatorControl {
  private readonly ca: Buffer;

  constructor(
    private readonly origin: string,
    caFile: string,
  ) {
    this.ca = fs.readFileSync(caFile);
  }

  private call(method: string, path: string, body?: unknown): Promise<unknown> {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    return new Promise((resolve, reject) => {
      const req = https.request(
        new URL(path, this.origin),
        { method, ca: this.ca, headers: payload ? { 'content-type': 'application/json', 'content-length': payload.length } : {} },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            if ((res.statusCode ?? 0) >= 400) reject(new Error(`${method} ${path}: ${res.statusCode} ${text}`));
            else resolve(text ? JSON.parse(text) : undefined);
          });
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
  }

  /** Adds switches (merged into the pending ones). */
  async setFaults(switches: FaultSwitches): Promise<void> {
    await this.call('POST', '/_simulator/faults', switches);
  }

  async clearFaults(): Promise<void> {
    await this.call('DELETE', '/_simulator/faults');
  }

  async pendingFaults(): Promise<FaultSwitches> {
    return (await this.call('GET', '/_simulator/faults')) as FaultSwitches;
  }

  /** Requests logged since `since` (an index from a previous answer's `next`, or 0 for all). */
  async requests(since = 0): Promise<{ next: number; requests: LoggedRequest[] }> {
    return (await this.call('GET', `/_simulator/requests?since=${since}`)) as { next: number; requests: LoggedRequest[] };
  }

  /** The log's current end: pass it to requests() later to see only what came after. */
  async mark(): Promise<number> {
    return (await this.requests(Number.MAX_SAFE_INTEGER)).next;
  }

  /** Graph simulator only: the bodies that did not fit Microsoft's schemas (and how many were checked). */
  async violations(): Promise<{ checked: number; violations: Array<{ method: string; path: string; schema: string; errors: string[] }> }> {
    return (await this.call('GET', '/_simulator/violations')) as { checked: number; violations: Array<{ method: string; path: string; schema: string; errors: string[] }> };
  }

  /** Graph simulator only: drops the delta history, so every token issued so far answers 410 Gone. */
  async expireDeltaTokens(): Promise<void> {
    await this.call('POST', '/_simulator/delta/expire');
  }

  /** SharePoint simulator only: trims the change log, so every change token issued so far is refused (GetChanges). */
  async expireChangeTokens(): Promise<void> {
    await this.call('POST', '/_simulator/changes/expire');
  }

  /** Graph simulator only: `folders` folders of `filesPerFolder` files of `bytes` bytes in root folder `folder`, at once (benchmarks). */
  async seed(plan: { folder: string; folders: number; filesPerFolder: number; bytes: number }): Promise<{ folderId: string; items: number }> {
    return (await this.call('POST', '/_simulator/seed', plan)) as { folderId: string; items: number };
  }

  async clearRequests(): Promise<void> {
    await this.call('DELETE', '/_simulator/requests');
  }
}
