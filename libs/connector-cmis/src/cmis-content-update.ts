import type { Actor, ContentUpdateCapability, NewContent } from '@gateway/connector-api';
import type { CmisConnector } from './cmis.connector';
import { declaredMimeType, uploading } from './input';
import { gatewayId, isCheckedOut, objectId, str } from './item-info';

/** The contentUpdate group (repositories whose content stream can be updated). */
export class CmisContentUpdate implements ContentUpdateCapability {
  constructor(private readonly connector: CmisConnector) {}

  async updateContent(id: string, input: NewContent, actor: Actor): Promise<string> {
    await this.connector.requireGroup('contentUpdate', 'updateFile');
    const props = await this.connector.writableDocument(id, 'fileId');
    const user = this.connector.userFor(actor);
    const content = {
      stream: input.content,
      mimeType: declaredMimeType(input.mimeType) ?? str(props, 'cmis:contentStreamMimeType') ?? 'application/octet-stream',
      fileName: input.fileName ?? str(props, 'cmis:name') ?? 'content',
    };
    const call = { as: user, id, parameter: 'fileId' };
    if (isCheckedOut(props)) {
      // The holder changes the private working copy; the check-in makes the version.
      const pwc = await this.connector.ownWorkingCopy(props, user, id);
      await uploading(() => this.connector.client.setContentStream(pwc, content, call));
      return gatewayId(props);
    }
    const type = await this.connector.typeOf(props);
    if (!type.versionable) {
      await uploading(() => this.connector.client.setContentStream(objectId(props), content, call));
      return gatewayId(props);
    }
    // A versionable document gets a new version for every content update: check out, set, check in.
    const pwc = objectId((await this.connector.client.checkOut(objectId(props), call)).succinctProperties);
    try {
      await uploading(() => this.connector.client.setContentStream(pwc, content, call));
      await this.connector.client.checkIn(pwc, undefined, call);
    } catch (e) {
      await this.connector.client.cancelCheckOut(pwc, call).catch(() => undefined);
      throw e;
    }
    return gatewayId(props);
  }
}
