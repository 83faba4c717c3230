import { Module } from '@nestjs/common';
import { SearchController } from './search.controller';
import { SearchService } from './search.service';

/** Spec 4.6: select and raw query over a connector's search group. */
@Module({ controllers: [SearchController], providers: [SearchService] })
export class SearchModule {}
