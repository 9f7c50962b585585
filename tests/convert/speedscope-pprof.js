// node speedscope-pprof.js BUNDLE PROFILE.pb.gz
//
// Run speedscope's own pprof importer, taken from its release bundle, on a
// gzip'ed profile.proto and print what it makes of it: the total weight,
// then "self<TAB>name" for every frame with self weight.  The bundle is the
// web application; the importer is a function of it, found by its shape
// (it decodes perftools.profiles.Profile) and exported before the
// application starts, which fails without a DOM and is left to fail.
// Exit 77 when this bundle has no such function (another speedscope).
'use strict';
const fs = require('fs'), vm = require('vm'), zlib = require('zlib');
const [bundlePath, profPath] = process.argv.slice(2);
let src = fs.readFileSync(bundlePath, 'utf8');
// the importer: function X(t){if(t.byteLength===0)return null;let e;try{e=Y.perftools.profiles.Profile.decode
const imp = /function ([\w$]+)\(([\w$]+)\)\{if\(\2\.byteLength===0\)return null;let ([\w$]+);try\{\3=([\w$]+)\.perftools\.profiles\.Profile\.decode/.exec(src);
if (!imp) { console.error('no pprof importer in the bundle'); process.exit(77); }
// its lazy module initialiser: var Y,...,INIT=re(()=>{... Y=...
const init = new RegExp('var ' + imp[4].replace(/\$/g, '\\$') + ',[\\w$,]*?([\\w$]+)=([\\w$]+)\\(\\(\\)=>\\{').exec(src.slice(imp.index));
if (!init) { console.error('no initialiser of the pprof importer in the bundle'); process.exit(77); }
src = src.slice(0, imp.index) + 'globalThis.__jpImport=function(b){' + init[1] + '();return ' + imp[1] +
      '(b)};' + src.slice(imp.index);
// the rest of the bundle starts the web application: no DOM here, let it fail
const ctx = { console, TextDecoder, TextEncoder, setTimeout: () => 0, clearTimeout: () => {} };
ctx.globalThis = ctx.window = ctx.self = ctx;
vm.createContext(ctx);
try { vm.runInContext(src, ctx); } catch (e) { /* the application, not the importer */ }
if (typeof ctx.__jpImport !== 'function') { console.error('the importer did not load'); process.exit(77); }
const raw = zlib.gunzipSync(fs.readFileSync(profPath));
const prof = ctx.__jpImport(raw.buffer.slice(raw.byteOffset, raw.byteOffset + raw.length));
if (!prof) { console.error('speedscope could not import ' + profPath); process.exit(1); }
console.log(prof.getTotalWeight());
prof.forEachFrame(f => { if (f.getSelfWeight() > 0) console.log(f.getSelfWeight() + '\t' + f.name); });
process.exit(0);
