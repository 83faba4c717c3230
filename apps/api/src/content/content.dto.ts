import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import { IsBoolean, IsInt, IsNotEmpty, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';

// Ids and paths are opaque to the service; the driver validates them. These caps only keep absurd input out.
const MAX_ID = 4096;
const MAX_NAME = 1024;
export const MAX_PAGE_SIZE = 10_000;

/** 'true'/'false' (any case) become booleans; anything else stays a string and fails @IsBoolean. */
const toBoolean = ({ value }: { value: unknown }) => {
  if (typeof value !== 'string') return value;
  const v = value.toLowerCase();
  return v === 'true' ? true : v === 'false' ? false : value;
};

export class ItemIdQuery {
  @ApiProperty({ description: 'Repository id of the item', example: 'fs-cmVwb3J0LnBkZg' })
  @IsString()
  @IsNotEmpty()
  @MaxLength(MAX_ID)
  id!: string;
}

export class FileIdQuery {
  @ApiProperty({ description: 'Repository id of the document', example: 'fs-cmVwb3J0LnBkZg' })
  @IsString()
  @IsNotEmpty()
  @MaxLength(MAX_ID)
  fileId!: string;
}

/** A finished tus upload of the caller (/api/uploads), as the content of a new document or version. */
class UploadIdProperty {
  @ApiPropertyOptional({
    description: 'Id of a finished resumable upload of the caller (the last segment of its /api/uploads Location), used as the content instead of a body; removed once the document is written',
    example: '3f0c6d1b2a9e8f47-9b0e2c51d7a84f3e96c1b0a2d4e6f809',
  })
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxLength(MAX_NAME)
  uploadId?: string;
}

export class UpdateContentQuery extends FileIdQuery {
  @ApiPropertyOptional({
    description: 'Id of a finished resumable upload of the caller, used as the new content instead of the body; removed once the version is written',
    example: '3f0c6d1b2a9e8f47-9b0e2c51d7a84f3e96c1b0a2d4e6f809',
  })
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxLength(MAX_NAME)
  uploadId?: string;
}

export class IdByPathQuery {
  @ApiProperty({ description: 'Name of the item inside the folder', example: 'report.pdf' })
  @IsString()
  @IsNotEmpty()
  @MaxLength(MAX_NAME)
  fileName!: string;

  @ApiProperty({ description: "Path of the parent folder, '/' for the root", example: '/projects/2024' })
  @IsString()
  @MaxLength(MAX_ID)
  folderPath!: string;
}

export class PostFileQuery extends UploadIdProperty {
  @ApiPropertyOptional({
    description: "Name of the new document; default: the file part's filename (UTF-8), or with uploadId the upload's `filename` metadata",
    example: 'rapport été.pdf',
  })
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxLength(MAX_NAME)
  fileName?: string;

  @ApiProperty({ description: 'Repository id of the target folder (rootfolderid gives the root)', example: 'fs-' })
  @IsString()
  @IsNotEmpty()
  @MaxLength(MAX_ID)
  folderId!: string;

  @ApiPropertyOptional({ description: 'A document type key from the types call', example: 'file' })
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxLength(MAX_NAME)
  type?: string;
}

/** Names of the update route's own parameters; every other query parameter is a property. */
export const UPDATE_PARAMETERS = ['fileId', 'fileName', 'folderId', 'type'] as const;

export class UpdateQuery {
  @ApiPropertyOptional({ description: 'Repository id of the document. Alternatively give fileName with folderId', example: 'fs-cmVwb3J0LnBkZg' })
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxLength(MAX_ID)
  fileId?: string;

  @ApiPropertyOptional({ description: 'With folderId, names the document to update instead of fileId', example: 'report.pdf' })
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxLength(MAX_NAME)
  fileName?: string;

  @ApiPropertyOptional({ description: 'With fileName, the repository id of the folder holding the document', example: 'fs-' })
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxLength(MAX_ID)
  folderId?: string;

  @ApiPropertyOptional({
    description: 'A document type key from the types call. Validated; connectors whose documents have a single type keep it',
    example: 'file',
  })
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxLength(MAX_NAME)
  type?: string;
}

export class CheckInQuery extends ItemIdQuery {
  @ApiPropertyOptional({ description: 'Check-in comment, shown as CheckinComment in folder listings', example: 'Fixed the totals' })
  @IsOptional()
  @IsString()
  @MaxLength(MAX_ID)
  comment?: string;
}

export class DeleteQuery {
  @ApiPropertyOptional({ description: 'Repository id of the document to delete. Exactly one of id and path', example: 'fs-cmVwb3J0LnBkZg' })
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxLength(MAX_ID)
  id?: string;

  @ApiPropertyOptional({
    description: 'Delete a document: true (default) removes every version, false only the latest (the previous one becomes current)',
    type: Boolean,
    default: true,
  })
  @IsOptional()
  @Transform(toBoolean)
  @IsBoolean({ message: 'allversions must be true or false' })
  allversions?: boolean;

  @ApiPropertyOptional({
    description: 'Absolute path of a folder to delete with its content. Exactly one of id and path; needs the deleteFolder capability',
    example: '/projects/old',
  })
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxLength(MAX_ID)
  path?: string;
}

export class FolderItemsQuery extends ItemIdQuery {
  @ApiPropertyOptional({
    description: 'Beyond the spec: page size. Without it the whole folder is listed. When more items follow, the answer carries X-Next-Cursor',
    minimum: 1,
    maximum: MAX_PAGE_SIZE,
    type: 'integer',
  })
  @IsOptional()
  @Type(() => Number)
  @IsInt({ message: 'limit must be an integer' })
  @Min(1)
  @Max(MAX_PAGE_SIZE)
  limit?: number;

  @ApiPropertyOptional({ description: 'Beyond the spec: the X-Next-Cursor value of the previous page (opaque)' })
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxLength(MAX_ID)
  cursor?: string;
}

export class FolderPathQuery {
  @ApiProperty({ description: 'Absolute path of the folder to create; missing parents are created too', example: '/projects/2024/q3' })
  @IsString()
  @IsNotEmpty()
  @MaxLength(MAX_ID)
  path!: string;
}

export class IdResultDto {
  @ApiProperty({ description: 'Repository id of the item', example: 'fs-cmVwb3J0LnBkZg' })
  id!: string;
}

export class VersionEntryDto {
  @ApiProperty({ description: 'Id that reads this exact version with the get file call', example: 'fs-cmVwb3J0LnBkZg;2' })
  docId!: string;

  @ApiProperty({ description: 'Epoch milliseconds', example: 1718000000000 })
  lastModified!: number;

  @ApiProperty({ type: String, nullable: true, example: 'report.pdf' })
  name!: string | null;

  @ApiProperty({ example: '2.0' })
  versionLabel!: string;

  @ApiProperty({ description: 'Size in bytes', example: 1024 })
  versionLength!: number;

  @ApiProperty({ example: 'fs-cmVwb3J0LnBkZg' })
  versionSeriesId!: string;
}

const nullableString = (description: string, example?: string) => ApiProperty({ type: String, nullable: true, description, example });

/** Spec 2.3: every member a string; absent values null. */
export class FolderItemEntryDto {
  @ApiProperty({ example: 'document', description: 'document or folder' })
  BaseType!: string;

  @ApiProperty({ enum: ['true', 'false'], description: "'true' or 'false' as a string" })
  CheckedOut!: string;

  @nullableString('Comment of the last check-in')
  CheckinComment!: string | null;

  @nullableString('Size in bytes, as a string', '1024')
  ContentLength!: string | null;

  @nullableString('User name')
  CreatedBy!: string | null;

  @nullableString('Epoch milliseconds, as a string', '1718000000000')
  CreatedDate!: string | null;

  @nullableString('Description')
  Description!: string | null;

  @ApiProperty({ description: 'Repository id' })
  Id!: string;

  @ApiProperty({ description: 'Path, equal to the key', example: '/projects/report.pdf' })
  ItemPath!: string;

  @nullableString('Media type', 'application/pdf')
  MimeType!: string | null;

  @nullableString('User name')
  ModifiedBy!: string | null;

  @nullableString('Epoch milliseconds, as a string', '1718000000000')
  ModifiedDate!: string | null;

  @ApiProperty({ example: 'report.pdf' })
  Name!: string;

  @nullableString('Site path, for site-based repositories')
  SitePath!: string | null;

  @ApiProperty({ example: 'document', description: 'Service-level type' })
  SvcType!: string;

  @nullableString('Repository object type', 'file')
  Type!: string | null;

  @ApiProperty({ example: '3', description: "Number of versions, as a string; '-1' when the repository does not count them" })
  VersionCount!: string;

  @nullableString('Label of the current version', '3.0')
  VersionLabel!: string | null;

  @nullableString('Id shared by all versions')
  VersionSeriesId!: string | null;
}

export class PropertyEntryDto {
  @ApiProperty({ description: "The property's value inside square brackets ('[]' when absent)", example: '[report.pdf]' })
  DisplayName!: string;

  @ApiProperty({ description: "Human label: Created, Last Modified, File Name, Mime Type, Content Length; a custom property's own name", example: 'File Name' })
  QueryName!: string;
}
