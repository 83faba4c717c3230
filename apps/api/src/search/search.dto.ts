import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

export class FacetBucketDto {
  @ApiProperty({ example: 'application/pdf', description: 'The value, as a string (dates as ISO 8601 UTC)' })
  value!: string;

  @ApiProperty({ example: 42 })
  count!: number;
}

export class SelectResultsDto {
  @ApiProperty({ example: 137, description: 'Documents matching q and every fq' })
  numFound!: number;

  @ApiProperty({ example: 0 })
  start!: number;

  @ApiProperty({ example: 10, description: 'The page size asked for (rows)' })
  rows!: number;

  @ApiProperty({
    description:
      'The page of documents: the id always as `id`; dates as ISO 8601 UTC strings, numbers as JSON numbers, multi-valued fields as arrays',
    type: 'array',
    items: { type: 'object', additionalProperties: true, properties: { id: { type: 'string' } }, required: ['id'] },
    example: [{ id: 'doc-1', title: 'Quarterly report', tags: ['finance', 'q3'], size: 5120, created: '2024-03-01T10:00:00.000Z' }],
  })
  docs!: Record<string, unknown>[];

  @ApiPropertyOptional({
    description: 'Only with facet=true: per facet.field, buckets ordered by count descending, then value ascending',
    type: 'object',
    additionalProperties: { type: 'array', items: { $ref: '#/components/schemas/FacetBucketDto' } },
  })
  facets?: Record<string, FacetBucketDto[]>;
}
