import type { ContentConnector } from '@gateway/connector-api';
import type { JobDefinition } from '../config/job-definition.dto';
import type { PlanSteps } from './document-planner';
import { AclCarrier } from './mapping/acl-carrier';
import { MappedProperties } from './mapping/mapped-properties';
import { NameRefused, TargetNames } from './target-names';

/**
 * The steps a dry run asks of each document, built from the job's options as the copier builds its own:
 * the target names (TargetNames: the folders and names fitted to the target's rules, NAME_REFUSED under
 * `names: refuse`), and with `copyAcls` the source's ACL mapped (the same AclCarrier decisions: unmapped
 * principals and permissions noted, ACL_UNMAPPED under `unmapped: fail`), and with `mapping` the properties
 * and type mapped and checked against the target (MappedProperties: unmapped properties and types noted,
 * the failure a real run would record).
 */
export function planSteps(def: JobDefinition, source: ContentConnector, target: ContentConnector, dataDir?: string): PlanSteps {
  const names = new TargetNames(target.namingRules, def.options.names ?? 'sanitize');
  const acls = def.options.copyAcls ? new AclCarrier(def.options.aclMapping, source, target, dataDir) : undefined;
  // The actor only signs writes, and a plan makes none.
  const properties = def.options.mapping ? new MappedProperties(def.options.mapping, source, target, { username: 'dry-run' }) : undefined;
  const refusedName = <T>(fit: () => T): T | { refused: string } => {
    try {
      return fit();
    } catch (e) {
      if (e instanceof NameRefused) return { refused: `NAME_REFUSED: ${e.message}` };
      throw e;
    }
  };
  return {
    targetDir: (targetFolder, relDir) => names.folder(targetFolder, relDir),
    targetName: (sourceName, _item, targetDir) => refusedName(() => ({ name: names.name(targetDir, sourceName) })),
    ...(acls ? { ready: () => acls.ready() } : {}),
    map: async (item, notes) => {
      // In the copier's order: the permissions (AclCarrier.plan), then the properties (MappedProperties.prepare).
      await acls?.note(item.id, notes);
      return (await properties?.note(item.id, notes))?.failure;
    },
  };
}
