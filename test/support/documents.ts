/**
 * Real office documents made in the test, whose text is known: a PDF (pdfkit, text drawn with a
 * standard font into a compressed content stream, so no byte of the file spells the words) and a
 * DOCX (docx: Office Open XML in a zip). Used by text extraction's e2e and the indexing jobs' e2e.
 * The fixtures are small and built in memory; the gateway itself never buffers documents.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Document, Packer, Paragraph, TextRun, HeadingLevel } from 'docx';
import PDFDocument from 'pdfkit';

export const PDF_MIME = 'application/pdf';
export const DOCX_MIME = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';

export interface DocumentText {
  /** First line: the PDF's first line / the DOCX's heading; also the document's Title property. */
  title: string;
  /** One paragraph each. */
  paragraphs: string[];
}

/** A PDF of the title and paragraphs (Helvetica, WinAnsi: Latin-1 text survives extraction). */
export function makePdf(doc: DocumentText): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const pdf = new PDFDocument({ compress: true, info: { Title: doc.title, Author: 'content gateway tests' } });
    const chunks: Buffer[] = [];
    pdf.on('data', (chunk: Buffer) => chunks.push(chunk));
    pdf.on('end', () => resolve(Buffer.concat(chunks)));
    pdf.on('error', reject);
    pdf.font('Helvetica-Bold').fontSize(18).text(doc.title);
    pdf.font('Helvetica').fontSize(11);
    for (const paragraph of doc.paragraphs) pdf.moveDown().text(paragraph);
    pdf.end();
  });
}

/** A DOCX whose heading is the title, with one paragraph per entry. */
export function makeDocx(doc: DocumentText): Promise<Buffer> {
  const document = new Document({
    title: doc.title,
    creator: 'content gateway tests',
    sections: [
      {
        children: [
          new Paragraph({ heading: HeadingLevel.HEADING_1, children: [new TextRun(doc.title)] }),
          ...doc.paragraphs.map((text) => new Paragraph({ children: [new TextRun(text)] })),
        ],
      },
    ],
  });
  return Packer.toBuffer(document);
}

/** Writes a made document into a folder (a filesystem connector's root, say); returns its path. */
export async function writeDocument(folder: string, name: string, kind: 'pdf' | 'docx', doc: DocumentText): Promise<string> {
  const file = path.join(folder, name);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, kind === 'pdf' ? await makePdf(doc) : await makeDocx(doc));
  return file;
}
