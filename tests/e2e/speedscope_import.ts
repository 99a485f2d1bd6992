// speedscope_import.ts — imports trace files with speedscope's own Trace
// Event importer (src/import/trace-event.ts, what its UI runs on a trace
// it recognises as Trace Event Format) and counts the "Tried to end ..."
// warnings it prints when a thread's slices do not nest.  Bundled and run
// by tests/e2e/check_speedscope.sh; prints one line per file.
import {importTraceEvents} from 'speedscope-src/import/trace-event'
import * as fs from 'fs'

const warnings: string[] = []
console.warn = (...args: any[]) => {
  warnings.push(args.map(String).join(' '))
}
let status = 0
for (const path of process.argv.slice(2)) {
  warnings.length = 0
  let line: string
  try {
    const group = importTraceEvents(JSON.parse(fs.readFileSync(path, 'utf8')))
    const tried = warnings.filter(w => w.includes('Tried to end'))
    line = `${path}: ${group.profiles.length} thread profiles, ${tried.length} "Tried to end" warnings`
    if (tried.length) {
      status = 1
      line += '\n  ' + tried.slice(0, 3).join('\n  ')
    }
  } catch (e) {
    status = 2
    line = `${path}: speedscope could not import it: ${e}`
  }
  console.log(line)
}
process.exit(status)
