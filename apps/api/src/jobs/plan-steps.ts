import type { ContentConnector } from '@gateway/connector-api';
import type { JobDefinition } from '../config/job-definition.dto';
import { DEFAULT_PLAN_STEPS, type PlanSteps } from './document-planner';
import { AclCarrier } from './mapping/acl-carrier';

/**
 * The steps a dry run asks of each document, built from the job's options as the copier builds its own:
 * with `copyAcls`, the source's ACL mapped (the same AclCarrier decisions: unmapped principals and
 * permissions noted, ACL_UNMAPPED under `unmapped: fail`). Names keep DEFAULT_PLAN_STEPS.
 */
export function planSteps(def: JobDefinition, source: ContentConnector, target: ContentConnector, dataDir?: string): PlanSteps {
  const acls = def.options.copyAcls ? new AclCarrier(def.options.aclMapping, source, target, dataDir) : undefined;
  if (!acls) return DEFAULT_PLAN_STEPS;
  return {
    targetName: (sourceName, item) => DEFAULT_PLAN_STEPS.targetName(sourceName, item),
    ready: () => acls.ready(),
    map: async (item, notes) => {
      await acls.note(item.id, notes);
      return undefined;
    },
  };
}
