import type { ContentDigest, ContentHashCapability } from '@gateway/connector-api';
import { splitVersion } from './drive-items';
import type { GraphConnector } from './graph.connector';
import { QuickXorHash } from './quick-xor-hash';

/**
 * The `contentHash` group: `file.hashes.quickXorHash` of the drive item, which the service computes
 * from the content it stored. The only hash a SharePoint library (or OneDrive for Business) reports:
 * `sha1Hash` and `sha256Hash` are OneDrive personal's. A version id, or an item that carries no
 * quickXorHash, reports none (the job reads it back).
 */
export class GraphContentHash implements ContentHashCapability {
  readonly algorithm = 'quickxor';

  constructor(private readonly connector: GraphConnector) {}

  digest(): ContentDigest {
    return new QuickXorHash();
  }

  async hashOf(id: string): Promise<string | undefined> {
    if (splitVersion(id).version !== undefined) return undefined;
    return (await this.connector.fetchItem(id)).file?.hashes?.quickXorHash;
  }
}
