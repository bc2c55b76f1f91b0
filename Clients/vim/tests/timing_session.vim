vim9script
# The session of tests/timing.sh (a real Vim in tmux), on the fixture API whose base URL
# comes in $DATASOURCED_BASE_URL. It starts the daemon and waits for its answer (so that
# the daemon's start is not timed), writes Vim's process id to $DATASOURCED_TIMING_PID
# (for its memory), logs the channel to $DATASOURCED_TIMING_LOG (ch_logfile: what was
# sent and received, and when, from which timing.sh takes the daemon's share), then says
# "timing: ready" on the command line. The script then types `:call DatasourcedTiming('million')`
# (or 'hundred'):
#   million  /v1/million, 1,000,000 rows of counted placeholders, pages of 100;
#   hundred  the same API's first page alone: 100 rows (paginated, no counted
#            placeholders: a trailing loading row, the next page loads when it shows).
# Both show the columns id and title, so the screens differ only by what is counted.
g:datasourced_cmd = [getenv('DATASOURCED')]
const base_url = getenv('DATASOURCED_BASE_URL')

writefile([string(getpid())], getenv('DATASOURCED_TIMING_PID'))
ch_logfile(getenv('DATASOURCED_TIMING_LOG'), 'w')

def g:DatasourcedTiming(kind: string)
  ch_log('timing: open ' .. kind)
  var spec: dict<any> = {name: kind, kind: 'paginated', identityKey: 'id', keyPath: 'rows', pageSize: 100,
    remoteConfiguration: {baseURL: base_url}, apiPath: '/v1/million',
    title: kind, columns: [{key: 'id', width: 8}, 'title']}
  if kind == 'million'
    spec.placeholders = 'counted'
    spec.jumpThreshold = 300
  endif
  datasourced#OpenSpec(spec, kind)
enddef

# The daemon started and answering (not during the open), then: ready.
var conn = datasourced#rpc#Connection()
datasourced#rpc#Request(conn, 'ping', {}, (_, _) => {
  redraw
  echo 'timing: ready'
})
