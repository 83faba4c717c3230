'use strict';
// Shared by the job benchmarks: a gateway with src/dst filesystem connectors, define/start/wait a job.
const fs = require('node:fs');
const path = require('node:path');
const { gatewayApi: api, startGateway } = require('./harness');

async function startJobsGateway(srcRoot, dstRoot, env = {}) {
  const dir = fs.mkdtempSync(path.join(path.dirname(dstRoot), 'cfg-'));
  const file = path.join(dir, 'gateway.yaml');
  fs.writeFileSync(
    file,
    `connectors:\n  - {id: src, typeId: filesystem, params: {root: ${srcRoot}}}\n  - {id: dst, typeId: filesystem, params: {root: ${dstRoot}}}\n`,
  );
  const gw = await startGateway({ GATEWAY_CONFIG: file, ...env });
  const stop = gw.stop;
  // The config folder goes with the gateway (one was left per run before).
  gw.stop = async () => {
    await stop();
    fs.rmSync(dir, { recursive: true, force: true });
  };
  return gw;
}


async function defineJob(gw, name, sourcePath, targetPath) {
  const res = await api(gw, 'POST', '/admin/jobs', {
    jobName: name,
    source: { connectorId: 'src', folderPath: sourcePath },
    target: { connectorId: 'dst', folderPath: targetPath },
  });
  return res.results.jobId;
}

/**
 * Starts the job and polls its status until the run ends; returns { ms, status }. `finishing`:
 * once that many documents are finished (written, skipped or failed), it polls every
 * `finishing.pollMs` instead: the end is seen within a few ms without a poll every few ms for
 * the whole run.
 */
async function runJob(gw, jobId, pollMs = 20, finishing = undefined) {
  const t0 = process.hrtime.bigint();
  await api(gw, 'GET', `/job/service/${jobId}/start`);
  for (;;) {
    const s = (await api(gw, 'GET', `/job/service/${jobId}/status`)).results;
    if (!['RUNNING', 'PAUSING', 'ABORTING'].includes(s.status)) {
      return { ms: Number(process.hrtime.bigint() - t0) / 1e6, status: s };
    }
    const done = s.written + s.skipped + s.failed;
    await new Promise((r) => setTimeout(r, finishing && done >= finishing.documents ? finishing.pollMs : pollMs));
  }
}

module.exports = { startJobsGateway, api, defineJob, runJob };
