// Drives the SharePoint simulator with PnPjs (@pnp/sp 4, ESM, Node's fetch), as a separate process:
// PnPjs is ESM-only and jest runs CommonJS here. Input: a JSON argument {siteUrl, token, folder};
// the test CA comes through NODE_EXTRA_CA_CERTS (set by the spawning test). Output: one JSON line
// with what PnPjs got back. Authentication is a PnPjs behavior adding the MSAL token as a bearer.
import { spfi } from '@pnp/sp';
import { SPBrowser } from '@pnp/sp/behaviors/spbrowser.js';
import '@pnp/sp/webs/index.js';
import '@pnp/sp/lists/index.js';
import '@pnp/sp/folders/index.js';
import '@pnp/sp/files/index.js';
import '@pnp/sp/items/index.js';
import '@pnp/sp/security/index.js';
import '@pnp/sp/site-users/index.js';

const { siteUrl, token, folder } = JSON.parse(process.argv[2]);
const bearer = () => (instance) => {
  instance.on.auth.replace(async (url, init) => {
    init.headers = { ...init.headers, Authorization: `Bearer ${token}` };
    return [url, init];
  });
  return instance;
};
const sp = spfi(siteUrl).using(SPBrowser({ baseUrl: siteUrl }), bearer());

const out = {};
try {
  const web = await sp.web.select('Title', 'ServerRelativeUrl')();
  out.web = { Title: web.Title, ServerRelativeUrl: web.ServerRelativeUrl };
  const list = await sp.web.lists.getByTitle('Documents').select('Title', 'ItemCount', 'EntityTypeName')();
  out.list = { Title: list.Title, EntityTypeName: list.EntityTypeName };

  const dir = sp.web.getFolderByServerRelativePath(folder);
  const small = await dir.files.addUsingPath('pnp-small.txt', 'hello from PnPjs', { Overwrite: true });
  out.small = { Name: small.Name, Length: small.Length, UIVersionLabel: small.UIVersionLabel };
  await dir.files.addUsingPath('pnp-small.txt', 'second version', { Overwrite: true });

  const big = new Uint8Array(2 * 1024 * 1024 + 333);
  for (let i = 0; i < big.length; i++) big[i] = (i * 31 + 7) & 0xff;
  const chunked = await dir.files.addChunked('pnp-chunked.bin', new Blob([big]), { chunkSize: 1024 * 1024 });
  out.chunked = { Name: chunked.Name, Length: chunked.Length };

  const files = await dir.files.select('Name', 'Length')();
  out.listing = files.map((f) => ({ Name: f.Name, Length: f.Length })).sort((a, b) => a.Name.localeCompare(b.Name));

  const smallFile = sp.web.getFileByServerRelativePath(`${folder}/pnp-small.txt`);
  out.text = await smallFile.getText();
  const buffer = new Uint8Array(await sp.web.getFileByServerRelativePath(`${folder}/pnp-chunked.bin`).getBuffer());
  out.chunkedMatches = buffer.length === big.length && buffer.every((b, i) => b === big[i]);

  const versions = await smallFile.versions();
  out.versions = versions.map((v) => ({ ID: v.ID, VersionLabel: v.VersionLabel, Size: v.Size, Url: v.Url }));

  const item = await smallFile.getItem();
  await item.breakRoleInheritance(true, true);
  const user = await sp.web.ensureUser('i:0#.f|membership|carol@contoso.com');
  const read = await sp.web.roleDefinitions.getByName('Read')();
  await item.roleAssignments.add(user.Id, read.Id);
  const assignments = await item.roleAssignments.expand('Member', 'RoleDefinitionBindings')();
  out.permissions = assignments.map((a) => ({ login: a.Member.LoginName, roles: a.RoleDefinitionBindings.map((r) => r.Name) }));
  await item.roleAssignments.remove(user.Id, read.Id);
  out.afterRemove = (await item.roleAssignments.expand('Member')()).map((a) => a.Member.LoginName);
} catch (e) {
  out.error = `${e?.message ?? e}${e?.response ? ` (HTTP ${e.status})` : ''}`;
}
process.stdout.write(JSON.stringify(out) + '\n');
