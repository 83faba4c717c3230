import { InvalidArgumentError, type Actor, type ContentConnector } from '@gateway/connector-api';
import type { AclMapping } from '../../config/acl-mapping.dto';
import { mappingFilePath, readMappingCsv } from './acl-mapping-csv';
import { compileAclMapping, describeUnmapped, mapAclEntries, type CompiledAclMapping, type MappedAcl, type MappingFiles } from './acl-mapping';

/** What one document's copy gets: the mapped entries, and the warning naming what was dropped. */
export interface PlannedAcl {
  mapped: Record<string, string[]>;
  warning?: string;
}

/**
 * A copy job's `copyAcls`, for one run and process: the mapping compiled once (its files read when the
 * run starts here; a bad line fails the run), then each document's source ACL read and mapped before its
 * write (plan) and applied to the copy after it (apply).
 */
export class AclCarrier {
  private compiled?: Promise<CompiledAclMapping>;

  constructor(
    private readonly mapping: AclMapping | undefined,
    private readonly source: ContentConnector,
    private readonly target: ContentConnector,
    /** The gateway's data directory: mapping files are under its `mappings/`. */
    private readonly dataDir: string | undefined,
  ) {}

  /** The compiled mapping; a mapping file that cannot be read rejects (the run fails naming file and line). */
  ready(): Promise<CompiledAclMapping> {
    this.compiled ??= this.compile();
    return this.compiled;
  }

  /**
   * The source document's entries mapped, read before anything is written: under `unmapped: fail` an
   * unmapped principal or permission throws here (ACL_UNMAPPED naming it), so the document fails with
   * nothing at the target; under `drop`, `warning` names what is left out.
   */
  async plan(sourceId: string): Promise<PlannedAcl> {
    return this.verdict(await this.mapSource(sourceId));
  }

  /**
   * A dry run's look at one document (DocumentPlanner's map step): every unmapped principal and permission
   * noted, then the same verdict as `plan` (it throws the same ACL_UNMAPPED under `unmapped: fail`).
   */
  async note(sourceId: string, notes: { unmapped(kind: 'principal' | 'permission', name: string): void }): Promise<void> {
    const result = await this.mapSource(sourceId);
    for (const principal of result.unmapped.principals) notes.unmapped('principal', principal);
    for (const permission of result.unmapped.permissions) notes.unmapped('permission', permission);
    this.verdict(result);
  }

  private async mapSource(sourceId: string): Promise<MappedAcl & { mode: CompiledAclMapping['unmapped'] }> {
    const mapping = await this.ready();
    return { ...mapAclEntries(mapping, await this.source.acls!.getAcl(sourceId)), mode: mapping.unmapped };
  }

  private verdict({ mapped, unmapped, mode }: MappedAcl & { mode: CompiledAclMapping['unmapped'] }): PlannedAcl {
    const dropped = describeUnmapped(unmapped);
    if (dropped !== '' && mode === 'fail') {
      throw new InvalidArgumentError('options.aclMapping', `the source ACL has ${dropped} that no map names (aclMapping.unmapped: fail); nothing was written`, 'ACL_UNMAPPED');
    }
    return { mapped, ...(dropped === '' ? {} : { warning: `permissions: dropped unmapped ${dropped}` }) };
  }

  /** Gives the written copy the planned entries (one applyAcl; none when nothing is left to apply); answers the plan's warning. */
  async apply(targetId: string, planned: PlannedAcl, actor: Actor): Promise<string | undefined> {
    if (Object.keys(planned.mapped).length > 0) await this.target.acls!.applyAcl(targetId, planned.mapped, actor);
    return planned.warning;
  }

  private async compile(): Promise<CompiledAclMapping> {
    const files: MappingFiles = {};
    for (const [key, name] of [['principals', this.mapping?.principalsFile], ['groups', this.mapping?.groupsFile]] as const) {
      if (name === undefined) continue;
      if (this.dataDir === undefined) throw new InvalidArgumentError(`options.aclMapping.${key}File`, `Invalid parameter 'options.aclMapping.${key}File': no data directory to read it from`);
      files[key] = await readMappingCsv(mappingFilePath(this.dataDir, name), `options.aclMapping.${key}File`, name);
    }
    return compileAclMapping(this.mapping, this.source.typeId, this.target.typeId, files);
  }
}
