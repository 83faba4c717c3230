export * from './text-extractor';
