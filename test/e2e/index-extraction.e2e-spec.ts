import { randomBytes } from 'node:crypto';
import * as path from 'node:path';
import { ConnectorRegistry } from '../../apps/api/src/connectors/connector-registry.service';
import { indexTargets, useSearchEngines, type IndexEngineName } from '../contract/search-fixtures';
import { startEngines, type TikaInfo } from '../engines';
import { writeDocument } from '../support/documents';
import { adminAuth } from '../support/gateway';
import { call, startJobsGateway, waitStatus, type JobsGateway } from './jobs-helpers';

/**
 * Indexing jobs with text extraction through Apache Tika Server (issue 14): a PDF and a DOCX made in
 * the test, whose words appear nowhere but in their compressed content, are indexed by a job into
 * Solr, Elasticsearch and MongoDB (FerretDB), and a search through the gateway finds each by a word of
 * its text. Then Tika goes away: the same kind of job still completes, its documents are indexed with
 * their metadata only, and the audit says why for each. Not a `jobs*` file: its Tika is its own, and
 * the job engine's modes are covered by jobs-index.
 */
jest.setTimeout(600_000);

const ENGINES: IndexEngineName[] = ['solr', 'elasticsearch', 'opensearch', 'mongodb'];
const suffix = randomBytes(4).toString('hex');
const PDF_TEXT = { title: 'Quarterly report of the aardvark department', paragraphs: ['Revenue grew by twelve percent in zanzibar.'] };
const DOCX_TEXT = { title: 'Minutes of the wombat committee', paragraphs: ['The committee approved the quokka budget.'] };

describe('Indexing jobs with Tika text extraction into Solr, Elasticsearch, OpenSearch and MongoDB (FerretDB)', () => {
  let gw: JobsGateway;
  let tika: TikaInfo;
  let stopTika: () => Promise<void>;
  let releaseSearch: () => Promise<void>;
  let jobCount = 0;

  beforeAll(async () => {
    const handles = await startEngines(['tika'], { log: () => undefined });
    const { stop, ...info } = handles.tika;
    tika = info;
    stopTika = stop;
    const used = await useSearchEngines();
    releaseSearch = used.release;
    const targets = indexTargets(used.engines, { idPrefix: 'index', collection: `extract_${suffix}`, database: 'index_extraction' });
    for (const t of targets) await t.connector.close();
    gw = await startJobsGateway({
      extraYaml: targets.map((t) => `  - ${JSON.stringify(t.definition)}\n`).join(''),
      env: { TIKA_URL: tika.url, TIKA_TIMEOUT_MS: '120000' },
    });
  });

  afterAll(async () => {
    await gw?.close();
    await stopTika?.();
    await releaseSearch?.();
  });

  const auth = () => adminAuth();

  /** Defines and runs an indexing job of `folderPath` into a fresh collection; its settled status. */
  async function runIndexJob(engine: IndexEngineName, folderPath: string) {
    const collection = `x${++jobCount}_${suffix}`;
    const definition = { jobName: `extract-${engine}-${jobCount}`, source: { connectorId: 'src', folderPath }, target: { connectorId: `index-${engine}`, collection } };
    const defined = await gw.http().post(`${gw.api}/admin/jobs`).set('Authorization', auth()).send(definition);
    expect(defined.status).toBe(201);
    const jobId = defined.body.results.jobId as number;
    await call(gw, jobId, 'start');
    const settled = await waitStatus(gw, jobId, 'COMPLETED', 'COMPLETED_WITH_ERRORS', 'FAILED');
    return { jobId, collection, settled };
  }

  async function idsFound(engine: IndexEngineName, collection: string, q: string): Promise<string[]> {
    const res = await gw.http().get(`${gw.api}/search/index-${engine}/${collection}/select`).query({ q, fl: 'id', rows: '100' }).set('Authorization', auth());
    expect(res.status).toBe(200);
    return (res.body.results.docs as Array<{ id: unknown }>).map((d) => String(d.id)).sort();
  }

  const srcId = (folder: string, name: string) => gw.app.get(ConnectorRegistry).get('src').idByPath(folder, name);

  it.each(ENGINES)('indexes the text of a PDF and a DOCX through Tika into %s, found by words of each', async (engine) => {
    const folder = `/office-${engine}`;
    await writeDocument(path.join(gw.srcRoot, folder), 'report.pdf', 'pdf', PDF_TEXT);
    await writeDocument(path.join(gw.srcRoot, folder), 'minutes.docx', 'docx', DOCX_TEXT);
    const { collection, settled } = await runIndexJob(engine, folder);
    expect(settled).toMatchObject({ status: 'COMPLETED', read: 2, written: 2, failed: 0 });

    const pdf = `src:${await srcId(folder, 'report.pdf')}`;
    const docx = `src:${await srcId(folder, 'minutes.docx')}`;
    expect(await idsFound(engine, collection, 'content:zanzibar')).toEqual([pdf]);
    expect(await idsFound(engine, collection, 'content:aardvark')).toEqual([pdf]);
    expect(await idsFound(engine, collection, 'content:quokka')).toEqual([docx]);
    expect(await idsFound(engine, collection, 'content:wombat')).toEqual([docx]);
    expect(await idsFound(engine, collection, 'mime_type:"application/pdf"')).toEqual([pdf]);
  });

  it('with Tika down, a job still completes on every engine: metadata only, and the audit names why', async () => {
    await stopTika();
    for (const engine of ENGINES) {
      const folder = `/tika-down-${engine}`;
      await writeDocument(path.join(gw.srcRoot, folder), 'report.pdf', 'pdf', PDF_TEXT);
      const { jobId, collection, settled } = await runIndexJob(engine, folder);
      expect(settled).toMatchObject({ status: 'COMPLETED', read: 1, written: 1, failed: 0 });

      const pdf = `src:${await srcId(folder, 'report.pdf')}`;
      expect(await idsFound(engine, collection, 'name:"report.pdf"')).toEqual([pdf]);
      expect(await idsFound(engine, collection, 'content:zanzibar')).toEqual([]);
      const audit = await gw.http().get(`${gw.api}/job/service/${jobId}/recordstatus`).query({ docId: await srcId(folder, 'report.pdf'), recordType: 'p' }).set('Authorization', auth());
      expect(audit.status).toBe(200);
      expect(audit.body.results).toContain(`indexed without text: Tika at ${tika.url} failed: ECONNREFUSED`);
    }
  });
});
