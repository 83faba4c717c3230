const { S3Client, CreateBucketCommand, PutObjectCommand } = require('@aws-sdk/client-s3');
const c = new S3Client({ endpoint: process.argv[2], region: 'us-east-1', forcePathStyle: true, requestChecksumCalculation: 'WHEN_REQUIRED', responseChecksumValidation: 'WHEN_REQUIRED', credentials: { accessKeyId: process.argv[3], secretAccessKey: process.argv[4] } });
(async () => {
  const B = 'probe' + Date.now();
  await c.send(new CreateBucketCommand({ Bucket: B }));
  for (const k of ['plain.txt', 'a b.txt', 'a+b.txt', 'a%b.txt', 'é.txt', 'x/y/z.txt', "q'(*)!~.txt", 'semi;colon=&$@,.txt', 'a  b.txt']) {
    for (const md of [undefined, { foo: 'bar' }]) {
      try { await c.send(new PutObjectCommand({ Bucket: B, Key: k, Body: 'hello', Metadata: md })); console.log('ok', k, !!md); } catch (e) { console.log('FAIL', k, !!md, e.name); }
    }
  }
})().catch((e) => console.log('ERR', e.name, e.message));
