import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Transform } from 'node:stream';
import type { Actor, ContentConnector, NewFile } from '@gateway/connector-api';
import { ConnectorRegistry } from '../../apps/api/src/connectors/connector-registry.service';
import { CONNECTOR_FIXTURES, type ContractEnvironment } from '../contract/fixtures';
import { sha256 } from '../contract/support';
import { adminAuth } from '../support/gateway';
import { MODE, call, defineJob, startJobsGateway, waitStatus, writeTree, type JobsGateway } from './jobs-helpers';

/**
 * Copy jobs' checksums end to end (the `verify` option), from a filesystem source into every content
 * connector of the contract fixtures (filesystem, S3 on MinIO, CMIS on OpenCMIS InMemory, the SharePoint
 * and Graph simulators): one test table, iterated over the fixtures, no code per connector. A target is
 * made faulty by wrapping its createFile in the running gateway (a byte flipped, or the last byte
 * dropped, on the way in), which is what the check must catch.
 */

/** Documents of a few shapes: empty, one byte, several network chunks, one in a subfolder. */
function documents(): Record<string, Buffer> {
  return {
    'empty.txt': Buffer.alloc(0),
    'one.txt': Buffer.from('x'),
    'large.bin': randomBytes(700_000),
    'sub/text.txt': Buffer.from('déjà vu, checked\n'),
  };
}

type Fault = 'flip' | 'truncate';

/** What a faulty target does to the bytes it is given: the first byte flipped, or the last one dropped (held back one chunk). */
function faulty(fault: Fault): Transform {
  let first = true;
  let held: Buffer | undefined;
  return new Transform({
    transform(chunk: Buffer, _e, callback) {
      if (fault === 'flip') {
        if (first && chunk.length > 0) {
          first = false;
          chunk = Buffer.from(chunk);
          chunk[0] ^= 0x5a;
        }
        return callback(null, chunk);
      }
      const out = held;
      held = chunk;
      callback(null, out);
    },
    flush(callback) {
      callback(null, held && held.length > 1 ? held.subarray(0, held.length - 1) : undefined);
    },
  });
}

interface ReportRow {
  relPath: string;
  outcome: string;
  message: string | null;
  checksum: string | null;
  verified: string | null;
  targetId: string | null;
}

describe.each(Object.values(CONNECTOR_FIXTURES))(`Copy jobs verify what they wrote: filesystem → $typeId, ${MODE} mode`, (fixture) => {
  let env: ContractEnvironment;
  let gw: JobsGateway;
  let target: ContentConnector;
  let seq = 0;

  beforeAll(async () => {
    env = await fixture.setup();
    gw = await startJobsGateway({ extraYaml: `  - ${env.connectorYaml}\n`, env: env.env });
    target = gw.app.get(ConnectorRegistry).get(env.connectorId);
  });
  afterAll(async () => {
    await gw?.close();
    await env?.teardown();
    if (gw) fs.rmSync(gw.root, { recursive: true, force: true });
  });

  /** What the target itself reports a hash with, else the content read back: the method each document's check must name. */
  const method = () => target.contentHash?.algorithm ?? 'read-back';

  /** Writes the documents under a fresh source folder and defines a job copying it to a fresh folder of the target. */
  async function job(files: Record<string, Buffer>, options: Record<string, unknown> = {}): Promise<{ jobId: number; targetFolder: string }> {
    const name = `verify-${++seq}-${randomBytes(3).toString('hex')}`;
    writeTree(path.join(gw.srcRoot, name), files);
    const targetFolder = `${env.testFolderPath}/${name}`;
    const jobId = await defineJob(gw, { jobName: name, source: { connectorId: 'src', folderPath: `/${name}` }, target: { connectorId: env.connectorId, folderPath: targetFolder }, options });
    return { jobId, targetFolder };
  }

  async function run(jobId: number) {
    await call(gw, jobId, 'start');
    return waitStatus(gw, jobId, 'COMPLETED', 'COMPLETED_WITH_ERRORS', 'FAILED');
  }

  async function rows(jobId: number): Promise<ReportRow[]> {
    const res = await gw.http().get(`${gw.api}/job/service/${jobId}/report`).set('Authorization', adminAuth()).expect(200);
    return res.body.results.rows as ReportRow[];
  }

  /** Whether the target has a document at `folder`/`rel`. */
  async function targetHas(folder: string, rel: string): Promise<boolean> {
    const full = `${folder}/${rel}`;
    const res = await gw
      .http()
      .get(`${gw.api}/repo/${env.connectorId}/idbypath`)
      .query({ folderPath: path.posix.dirname(full), fileName: path.posix.basename(full) })
      .set('Authorization', adminAuth());
    if (res.status !== 404) expect(res.status).toBe(200);
    return res.status === 200;
  }

  /** Makes the target's writes faulty until the returned function is called (no direct copy meanwhile: it bypasses createFile). */
  function breakTarget(fault: Fault): () => void {
    const own = { createFile: Object.getOwnPropertyDescriptor(target, 'createFile'), directCopy: Object.getOwnPropertyDescriptor(target, 'directCopy') };
    const createFile = target.createFile.bind(target);
    Object.assign(target, {
      directCopy: undefined,
      createFile: (input: NewFile, actor: Actor) => createFile({ ...input, content: input.content.pipe(faulty(fault)) }, actor),
    });
    return () => {
      for (const [key, descriptor] of Object.entries(own)) {
        if (descriptor) Object.defineProperty(target, key, descriptor);
        else delete (target as unknown as Record<string, unknown>)[key];
      }
    };
  }

  it('verify=hash (the default): every document written, its checksum the SHA-256 of the source, checked by the target’s own hash or read back', async () => {
    const files = documents();
    const { jobId } = await job(files);
    expect(await run(jobId)).toMatchObject({ status: 'COMPLETED', written: 4, failed: 0 });
    const report = await rows(jobId);
    expect(report).toHaveLength(4);
    for (const row of report) expect(row).toMatchObject({ outcome: 'p', checksum: sha256(files[row.relPath]), verified: method() });
  });

  it('a target that flips a byte on write: an error naming both hashes, the copy removed, written again by the next run', async () => {
    // An empty document has no byte to flip.
    const { 'empty.txt': _, ...files } = documents();
    const { jobId, targetFolder } = await job(files);
    const repair = breakTarget('flip');
    try {
      expect(await run(jobId)).toMatchObject({ status: 'COMPLETED_WITH_ERRORS', written: 0, failed: 3 });
    } finally {
      repair();
    }
    for (const row of await rows(jobId)) {
      expect(row).toMatchObject({ outcome: 'e', checksum: sha256(files[row.relPath]), verified: method() });
      const [, kind, sent, reported] = /^CHECKSUM_MISMATCH: source (\S+) (\S+)(?: \(\d+ bytes\))?, target \1 (\S+)/.exec(row.message ?? '') ?? [];
      expect(kind).toBe(method() === 'read-back' ? 'sha256' : method());
      expect(sent).toBeDefined();
      expect(reported).toBeDefined();
      expect(reported).not.toBe(sent);
      // The SHA-256 of the source is named whichever kind of hash the target reports.
      expect(row.message).toContain(sha256(files[row.relPath]));
      expect(row.message).toContain('the copy is removed');
      expect(await targetHas(targetFolder, row.relPath)).toBe(false);
    }
    expect(await run(jobId)).toMatchObject({ status: 'COMPLETED', written: 3, failed: 0 });
    for (const row of await rows(jobId)) expect(row).toMatchObject({ outcome: 'p', checksum: sha256(files[row.relPath]) });
  });

  it('verify=size catches a write that lost its last byte; verify=none lets a flipped byte through, recorded as unchecked', async () => {
    const files = { 'large.bin': randomBytes(700_000), 'small.txt': Buffer.from('twelve bytes') };
    const sized = await job(files, { verify: 'size' });
    const repairTruncating = breakTarget('truncate');
    try {
      expect(await run(sized.jobId)).toMatchObject({ status: 'COMPLETED_WITH_ERRORS', failed: 2 });
    } finally {
      repairTruncating();
    }
    for (const row of await rows(sized.jobId)) {
      const size = files[row.relPath as keyof typeof files].length;
      expect(row).toMatchObject({ outcome: 'e', verified: 'size', message: `SIZE_MISMATCH: source ${size} bytes, target ${size - 1} bytes; the copy is removed` });
      expect(await targetHas(sized.targetFolder, row.relPath)).toBe(false);
    }

    const unchecked = await job(files, { verify: 'none' });
    const repairFlipping = breakTarget('flip');
    try {
      expect(await run(unchecked.jobId)).toMatchObject({ status: 'COMPLETED', written: 2 });
    } finally {
      repairFlipping();
    }
    for (const row of await rows(unchecked.jobId)) expect(row).toMatchObject({ outcome: 'p', checksum: sha256(files[row.relPath as keyof typeof files]), verified: 'none' });
  });
});

describe(`Copy job definitions: verify and onMismatch, ${MODE} mode`, () => {
  let gw: JobsGateway;
  beforeAll(async () => {
    gw = await startJobsGateway();
  });
  afterAll(async () => {
    await gw?.close();
    if (gw) fs.rmSync(gw.root, { recursive: true, force: true });
  });

  it.each([
    [{ verify: 'md5' }, 'verify'],
    [{ onMismatch: 'delete' }, 'onMismatch'],
  ])('an unknown value (%j) is refused with 400 naming the option', async (options, name) => {
    const res = await gw
      .http()
      .post(`${gw.api}/admin/jobs`)
      .set('Authorization', adminAuth())
      .send({ jobName: `bad-${name}`, source: { connectorId: 'src', folderPath: '/in' }, target: { connectorId: 'dst', folderPath: '/out' }, options })
      .expect(400);
    expect(JSON.stringify(res.body)).toContain(name);
  });

  it('known values are stored and shown with the definition; absent, they are left to the defaults (hash, remove)', async () => {
    const body = { jobName: 'verify-size', source: { connectorId: 'src', folderPath: '/in' }, target: { connectorId: 'dst', folderPath: '/out' }, options: { verify: 'size', onMismatch: 'keep' } };
    const res = await gw.http().post(`${gw.api}/admin/jobs`).set('Authorization', adminAuth()).send(body).expect(201);
    expect(res.body.results.options).toMatchObject({ verify: 'size', onMismatch: 'keep' });
  });
});
