'use strict';
// Small helpers of the CMIS benchmarks that talk to the real CMIS server (harness.startEngine('cmis'))
// directly through the browser binding.
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

function authOf(info) {
  return 'Basic ' + Buffer.from(`${info.username}:${info.password}`).toString('base64');
}

function rootUrl(info) {
  return `${info.browserUrl}/${info.repositoryId}/root`;
}

async function post(info, form) {
  const res = await fetch(rootUrl(info), {
    method: 'POST',
    headers: { authorization: authOf(info), 'content-type': 'application/x-www-form-urlencoded; charset=UTF-8' },
    body: new URLSearchParams({ _charset_: 'UTF-8', succinct: 'true', ...form }),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`CMIS ${form.cmisaction}: ${res.status} ${text}`);
  return JSON.parse(text).succinctProperties;
}

async function rootFolderId(info) {
  const res = await fetch(`${info.browserUrl}/${info.repositoryId}?cmisselector=repositoryInfo`, { headers: { authorization: authOf(info) } });
  return (await res.json())[info.repositoryId].rootFolderId;
}

async function createFolder(info, parentId, name) {
  return post(info, {
    cmisaction: 'createFolder',
    objectId: parentId,
    'propertyId[0]': 'cmis:objectTypeId',
    'propertyValue[0]': 'cmis:folder',
    'propertyId[1]': 'cmis:name',
    'propertyValue[1]': name,
  });
}

/** A small document with the given text, created directly in the repository. */
async function createSmallDocument(info, folderId, name, text) {
  const form = new FormData();
  for (const [k, v] of Object.entries({ cmisaction: 'createDocument', objectId: folderId, 'propertyId[0]': 'cmis:objectTypeId', 'propertyValue[0]': 'cmis:document', 'propertyId[1]': 'cmis:name', 'propertyValue[1]': name, succinct: 'true' })) {
    form.append(k, v);
  }
  form.append('content', new Blob([text], { type: 'text/plain' }), name);
  const res = await fetch(rootUrl(info), { method: 'POST', headers: { authorization: authOf(info) }, body: form });
  if (!res.ok) throw new Error(`CMIS createDocument: ${res.status} ${await res.text()}`);
  return (await res.json()).succinctProperties;
}

/** A document whose content is a (large) file, uploaded directly by curl, which streams it. */
function createDocumentFromFile(info, folderId, name, file) {
  const out = execFileSync('curl', [
    '-s', '-u', `${info.username}:${info.password}`,
    '-F', 'cmisaction=createDocument', '-F', `objectId=${folderId}`,
    '-F', 'propertyId[0]=cmis:objectTypeId', '-F', 'propertyValue[0]=cmis:document',
    '-F', 'propertyId[1]=cmis:name', '-F', `propertyValue[1]=${name}`,
    '-F', 'succinct=true', '-F', `content=@${file};type=application/octet-stream`,
    rootUrl(info),
  ], { encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 });
  const body = JSON.parse(out);
  if (!body.succinctProperties) throw new Error(`CMIS createDocument: ${out.slice(0, 300)}`);
  return body.succinctProperties;
}

/** GATEWAY_CONFIG for a gateway with one cmis connector (id `cmis`) on this server. */
function writeGatewayConfig(info, dir, params = {}) {
  const file = path.join(dir, 'gateway-cmis.yaml');
  const connector = {
    id: 'cmis',
    typeId: 'cmis',
    description: 'OpenCMIS InMemory (benchmark)',
    params: { url: info.browserUrl, repositoryId: info.repositoryId, user: info.username, password: info.password, ...params },
  };
  fs.writeFileSync(file, `connectors:\n  - ${JSON.stringify(connector)}\n`);
  return file;
}

module.exports = { authOf, rootUrl, rootFolderId, createFolder, createSmallDocument, createDocumentFromFile, writeGatewayConfig };
