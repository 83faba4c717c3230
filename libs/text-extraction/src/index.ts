export * from './text-extractor';
export { createTextExtractor, DEFAULT_TIKA_TIMEOUT_MS, type ClosableTextExtractor, type TextExtractorOptions } from './extractor';
export { TextExtractionModule } from './text-extraction.module';
