import type { DownloadLinkRecord, UserFileRecord } from '@gateway/persistence';
import type { DownloadLinkDto, DownloadLinkKeyDto, UserFileDto } from './files.dto';

export function toUserFileDto(f: UserFileRecord): UserFileDto {
  return {
    id: f.id,
    fileName: f.fileName,
    expires: f.expiresAt,
    createdDate: f.createdAt,
    size: f.state === 'ready' ? f.size : 0,
    createdBy: f.owner,
    ready: f.state === 'ready',
    mimeType: f.mimeType,
    type: f.type,
    state: f.state,
    progress: { entriesTotal: f.entriesTotal, entriesDone: f.entriesDone, bytesDone: f.bytesDone, errors: f.errorCount },
    message: f.message ?? null,
  };
}

function linkFields(l: DownloadLinkRecord) {
  return {
    internal: l.internal,
    expires: l.expiresAt,
    fileName: l.fileName,
    createdBy: l.owner,
    connectorId: l.connectorId,
    docId: l.docId,
    created: l.createdAt,
    used: l.used,
  };
}

export function toLinkDto(l: DownloadLinkRecord): DownloadLinkDto {
  return { ...linkFields(l), id: l.key };
}

export function toLinkKeyDto(l: DownloadLinkRecord): DownloadLinkKeyDto {
  return { ...linkFields(l), key: l.key };
}
