import type { Actor, ContentUpdateCapability, NewContent } from '@gateway/connector-api';
import { ATTRIBUTION_FIELDS } from '@gateway/microsoft-client';
import { fileId } from './ids';
import type { SharePointConnector } from './sharepoint.connector';

/** The contentUpdate group: new content for a file (a new version where the library keeps versions). */
export class SharePointContentUpdate implements ContentUpdateCapability {
  constructor(private readonly connector: SharePointConnector) {}

  async updateContent(id: string, input: NewContent, actor: Actor): Promise<string> {
    const { spId, file } = await this.connector.fileOf(id, 'fileId');
    this.connector.assertWritable(file, actor, id);
    await this.connector.upload.sendContent(input.content, { uid: spId.uid }, id);
    await this.connector.merge(spId.uid, { [ATTRIBUTION_FIELDS.modifiedBy]: actor.username }, id);
    return fileId(spId.uid);
  }
}
