import { InvalidArgumentError, type Actor, type ContentUpdateCapability, type NewContent } from '@gateway/connector-api';
import { checkId, GATEWAY_FIELDS, splitVersion } from './drive-items';
import type { GraphConnector } from './graph.connector';
import { fileSystemInfoOf } from './graph-version-stamps';

/** The contentUpdate group: new content for a document (a new version where the library keeps versions). */
export class GraphContentUpdate implements ContentUpdateCapability {
  constructor(private readonly connector: GraphConnector) {}

  async updateContent(id: string, input: NewContent, actor: Actor): Promise<string> {
    checkId(id, 'fileId');
    if (splitVersion(id).version) throw new InvalidArgumentError('fileId', "Invalid parameter 'fileId': a version cannot be changed");
    await this.connector.writableDocument(id, actor, 'fileId');
    const staged = await this.connector.stage(input.content);
    const itemPath = await this.connector.itemPath(id);
    await this.connector.upload(staged, { putPath: `${itemPath}/content`, sessionPath: `${itemPath}/createUploadSession`, conflict: 'replace' }, input.mimeType, { id, parameter: 'fileId' }, fileSystemInfoOf(input.stamp));
    await this.connector.setGatewayFields(id, { [GATEWAY_FIELDS.modifiedBy]: input.stamp?.modifiedBy ?? actor.username });
    return id;
  }
}
