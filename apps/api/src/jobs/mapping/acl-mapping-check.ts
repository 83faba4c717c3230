import { InvalidArgumentError, type ContentConnector } from '@gateway/connector-api';
import type { JobDefinition } from '../../config/job-definition.dto';
import { MAX_PRINCIPAL } from './acl-mapping-csv';

const MAX_MAP_ENTRIES = 10_000;
const INLINE_MAPS = ['principals', 'groups', 'permissions'] as const;

/**
 * Definition-time checks of `options.copyAcls` and `options.aclMapping` on a copy job (a 400 naming the
 * parameter): both connectors have the `acls` group; the inline maps have non-empty string keys and values,
 * and no source named twice (compared case-insensitively, as SharePoint and Graph compare principals; a
 * source in both `principals` and `groups` counts as twice). The files are read at run start.
 */
export function checkAclOptions(def: JobDefinition, source: ContentConnector, target: ContentConnector): void {
  const { copyAcls, aclMapping } = def.options;
  if (aclMapping !== undefined && copyAcls !== true) {
    throw new InvalidArgumentError('options.aclMapping', "Invalid parameter 'options.aclMapping': maps the permissions a job carries; set options.copyAcls: true");
  }
  if (copyAcls !== true) return;
  for (const [side, connector] of [['source', source], ['target', target]] as const) {
    if (!connector.acls) {
      throw new InvalidArgumentError(
        'options.copyAcls',
        `Invalid parameter 'options.copyAcls': the ${side} connector '${connector.id}' (${connector.typeId}) has no acls group (CMIS, SharePoint REST and Graph have)`,
      );
    }
  }
  if (aclMapping === undefined) return;
  const principalSources = new Map<string, string>();
  for (const name of INLINE_MAPS) {
    const map: unknown = aclMapping[name];
    if (map === undefined) continue;
    const parameter = `options.aclMapping.${name}`;
    const entries = Object.entries(map as Record<string, unknown>);
    if (entries.length > MAX_MAP_ENTRIES) throw refuse(parameter, `at most ${MAX_MAP_ENTRIES} entries inline; use a mapping file`);
    const seen = new Map<string, string>();
    for (const [from, to] of entries) {
      if (from.trim() === '') throw refuse(parameter, 'a source name is empty');
      if (typeof to !== 'string' || to.trim() === '') throw refuse(parameter, `'${clip(from)}' maps to ${typeof to === 'string' ? 'an empty name' : 'something other than a name'}`);
      if (from.length > MAX_PRINCIPAL || to.length > MAX_PRINCIPAL) throw refuse(parameter, `'${clip(from)}': names are at most ${MAX_PRINCIPAL} characters`);
      const key = from.trim().toLowerCase();
      const earlier = seen.get(key);
      if (earlier !== undefined) throw refuse(parameter, `'${clip(from)}' is mapped twice (as '${clip(earlier)}' too; names compare case-insensitively)`);
      seen.set(key, from);
      if (name === 'permissions') continue;
      const other = principalSources.get(key);
      if (other !== undefined) throw refuse(parameter, `'${clip(from)}' is mapped in both principals and groups`);
      principalSources.set(key, name);
    }
  }
}

function refuse(parameter: string, why: string): InvalidArgumentError {
  return new InvalidArgumentError(parameter, `Invalid parameter '${parameter}': ${why}`);
}

function clip(name: string): string {
  return name.length > 64 ? `${name.slice(0, 64)}…` : name;
}
