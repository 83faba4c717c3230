import { Injectable } from '@nestjs/common';
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { InvalidArgumentError, refuseUnknownParams, type ConnectorContext, type ConnectorDefinition, type ConnectorType, type ContentConnector } from '@gateway/connector-api';
import { FilesystemConnector } from './filesystem.connector';

/**
 * typeId `filesystem`. params: `root` (folder; created if missing), `windowsNames` (optional boolean: accept only
 * names Windows takes too, naming-rules.ts). Metadata goes to `<root>/.gateway/`.
 */
@Injectable()
export class FilesystemConnectorType implements ConnectorType {
  readonly typeId = 'filesystem';

  async create(definition: ConnectorDefinition, _context: ConnectorContext): Promise<ContentConnector> {
    refuseUnknownParams(definition.params, ['root', 'windowsNames']);
    const root = definition.params.root;
    if (typeof root !== 'string' || root.trim() === '') {
      throw new InvalidArgumentError('root', 'must be the path of the repository folder');
    }
    const windowsNames = definition.params.windowsNames ?? false;
    if (typeof windowsNames !== 'boolean') throw new InvalidArgumentError('windowsNames', "Invalid parameter 'windowsNames': must be true or false");
    const absolute = path.resolve(root);
    await fs.mkdir(absolute, { recursive: true });
    // Resolve symbolic links once, so containment checks compare real paths.
    const real = await fs.realpath(absolute);
    const connector = new FilesystemConnector(definition, real, windowsNames);
    await connector.init();
    return connector;
  }
}
