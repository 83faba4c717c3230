import { InvalidArgumentError, type Actor, type ContentConnector } from '@gateway/connector-api';
import type { AclMapping } from '../../config/acl-mapping.dto';
import { mappingFilePath, readMappingCsv } from './acl-mapping-csv';
import { compileAclMapping, describeUnmapped, mapAclEntries, type CompiledAclMapping, type MappingFiles } from './acl-mapping';

/**
 * A copy job's `copyAcls`, for one run and process: the mapping compiled once (its files read when the
 * run starts here; a bad line fails the run), then each written document's source ACL read, mapped and
 * applied to the copy.
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
   * Gives the copy the mapped entries of the source document; answers the warning naming what was
   * dropped (unmapped: drop), or throws naming it (unmapped: fail) without applying anything.
   */
  async carry(sourceId: string, targetId: string, actor: Actor): Promise<string | undefined> {
    const mapping = await this.ready();
    const { mapped, unmapped } = mapAclEntries(mapping, await this.source.acls!.getAcl(sourceId));
    const dropped = describeUnmapped(unmapped);
    if (dropped !== '' && mapping.unmapped === 'fail') {
      throw new InvalidArgumentError(
        'options.aclMapping',
        `the source ACL has ${dropped} that no map names (aclMapping.unmapped: fail); the content is written, its permissions are not`,
        'ACL_UNMAPPED',
      );
    }
    if (Object.keys(mapped).length > 0) await this.target.acls!.applyAcl(targetId, mapped, actor);
    return dropped === '' ? undefined : `permissions: dropped unmapped ${dropped}`;
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
