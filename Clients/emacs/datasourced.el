;;; datasourced.el --- Lists of the data sources of a datasourced daemon  -*- lexical-binding: t; -*-

;; Copyright (C) 2026 The datasourced authors

;; Author: The datasourced authors
;; Maintainer: The datasourced authors
;; Version: 0.1.0
;; Package-Requires: ((emacs "27.1") (jsonrpc "1.0"))
;; Keywords: tools, comm
;; URL: https://github.com/datasourced/datasourced

;; This file is not part of GNU Emacs.

;;; Commentary:

;; A client of datasourced, a daemon speaking JSON-RPC 2.0 over stdio with
;; the framing of the Language Server Protocol, which serves "data
;; sources": rows behind index paths [section, item], loaded from HTTP
;; APIs page by page.  `M-x datasourced-open' reads a list spec (JSON, or
;; TOML through python3's tomllib) and shows its source in a
;; `datasourced-list-mode' buffer, a `tabulated-list-mode' with a header
;; row per section and the daemon's loading, no-results and error
;; placeholders as rows.  Moving point near the end of the list, or
;; scrolling its last row into view, loads the next page; `g' loads
;; again, `C-c C-k' cancels a load, `q' closes the list and the sources
;; it created.  `/' filters the rows as you type (a `filtered' source over
;; the list's, the matched characters highlighted), and
;; `datasourced-search' searches the server (updateSource).
;; `datasourced-action' calls one of the actions a source declares on
;; the row at point (performAction), asking for its values; the row is
;; dim (the face `datasourced-pending') and marked until the server
;; answers, and a rollback says the server's words.
;; `datasourced-cancel-action' cancels the row's actions the server has
;; not taken yet (queued, or waiting behind another).
;;
;; The daemon is spoken to through the built-in `jsonrpc' library
;; (`jsonrpc-process-connection'), as Protocol.md in the repository
;; describes.  One daemon runs per command line (`datasourced-command')
;; and serves every list opened with it; it is stopped (shutdown, then
;; exit) when its last list is closed.
;;
;; See Clients/emacs/README.md for the spec format, the keys and the
;; settings (M-x customize-group RET datasourced).

;;; Code:

(require 'cl-lib)
(require 'subr-x)
(require 'jsonrpc)
(require 'tabulated-list)
(require 'json)
(require 'parse-time)

(defconst datasourced-version "0.1.0"
  "The version of this client, sent to the daemon in `initialize'.")

;;;; Settings

(defgroup datasourced nil
  "Lists of the data sources of a datasourced daemon."
  :group 'tools
  :prefix "datasourced-")

(defcustom datasourced-command '("datasourced")
  "The daemon's command line: the executable, then its arguments.
The executable is looked up on the variable `exec-path' unless it is a path;
`.build/debug/datasourced' in the repository after `swift build'."
  :type '(repeat string))

(defcustom datasourced-variables nil
  "Values of the ${NAME} references in list specs, as (NAME . VALUE).
A spec that names a variable missing here is refused, naming it.
Example: ((\"baseURL\" . \"http://127.0.0.1:8080\"))."
  :type '(alist :key-type string :value-type string))

(defcustom datasourced-page-ahead 2
  "How many lines before the end of a list point may be to load the next page.
0 loads the next page only with point on the trailing loading row."
  :type 'natnum)

(defcustom datasourced-column-max-width 40
  "The widest a column without a width of its own in the spec grows."
  :type 'natnum)

(defcustom datasourced-events-buffer-size 0
  "What the daemon's events buffer keeps besides the daemon's log (stderr).
0 keeps only the log; nil keeps every message exchanged, which
`datasourced-events' shows; a number keeps about that many characters."
  :type '(choice (const :tag "Every message" nil) natnum))

(defcustom datasourced-python-command "python3"
  "The Python used to read TOML specs (it needs tomllib: Python 3.11 or later)."
  :type 'string)

(defcustom datasourced-loaded-hook nil
  "Functions called, in the list's buffer, when a list finished loading."
  :type 'hook)

(defcustom datasourced-failed-hook nil
  "Functions called, in the list's buffer, when a list failed to load.
Each gets one argument: the error, a plist with at least `:message'
\(and, for a failed fetch, `:kind', `:url', `:status'...)."
  :type 'hook)

(defface datasourced-section
  '((t :inherit bold))
  "Face of the header row of a section.")

(defface datasourced-placeholder
  '((t :inherit shadow))
  "Face of the loading and no-results rows.")

(defcustom datasourced-display-delay 0.15
  "Seconds point rests on an unloaded row before its page is asked for.
Keys held down over the unloaded rows of a counted list ask once, for
the row where point stops.  The first and the last row ask at once."
  :type 'number)

(defface datasourced-unloaded
  '((t :inherit shadow))
  "Face of the rows of a counted list whose page is not loaded.")

(defface datasourced-error
  '((t :inherit error))
  "Face of error rows.")

(defface datasourced-match
  '((t :inherit match))
  "Face of the characters a filter's query matched.")

(defface datasourced-pending
  '((t :inherit shadow))
  "Face of the rows whose action the server has not answered yet.")

(defvar datasourced-pending-mark "  ⋯ pending"
  "What follows the last column of a row whose action is not settled yet.")

(defvar datasourced-placeholder-texts
  '((loading . "⋯ loading…")
    (noResults . "(no results)")
    (unloaded . " … row %d"))
  "How placeholder rows read, by kind.
The unloaded text has a %d for the row's number (from 1).")

;;;; Small helpers

(defun datasourced--object-p (value)
  "Whether VALUE is a JSON object as jsonrpc decodes it (a plist)."
  (and (consp value) (keywordp (car value))))

(defun datasourced--get (object key)
  "The member KEY (a string) of OBJECT (a plist or a hash table), or nil."
  (cond ((hash-table-p object) (gethash key object))
        ((datasourced--object-p object) (plist-get object (intern (concat ":" key))))))

(defun datasourced--at-key-path (value path)
  "The value at the dot key PATH (\"author.name\") in VALUE, or nil."
  (dolist (part (split-string path "\\." t) value)
    (setq value (datasourced--get value part))))

(defun datasourced--encode (value)
  "VALUE as compact JSON, as jsonrpc would send it."
  (condition-case nil
      (json-serialize value :null-object nil :false-object :json-false)
    (error (format "%S" value))))

(defun datasourced--scalar-text (value)
  "VALUE as people read it: a string as itself, other values as JSON."
  (cond ((stringp value) value)
        ((null value) "")
        ((eq value t) "true")
        ((eq value :json-false) "false")
        ((numberp value) (number-to-string value))
        (t (datasourced--encode value))))

(defun datasourced--one-line (text)
  "TEXT with its line breaks turned into spaces."
  (replace-regexp-in-string "[\r\n]+" " " text))

(defun datasourced--placeholder-kind (value)
  "The kind of placeholder VALUE is (`loading', `noResults', `error'), or nil."
  (let ((kind (and (datasourced--object-p value) (plist-get value :$placeholder))))
    (and (stringp kind) (intern kind))))

(defun datasourced--fetch-error-text (failure &optional short)
  "FAILURE (a fetch error) as text for people.
The URL first unless SHORT, then what happened and what the server said."
  (let* ((text (or (plist-get failure :message) (plist-get failure :kind) "unknown error"))
         (url (plist-get failure :url))
         (final (plist-get failure :finalURL))
         (said (plist-get failure :serverMessage))
         (body (plist-get failure :body))
         (retry (plist-get failure :retryAfterSeconds)))
    (when (and (stringp final) (not (equal final url)))
      (setq url (if url (concat url " → " final) final)))
    (when (and (stringp url) (not (string-empty-p url)) (not short))
      (setq text (concat url ": " text)))
    ;; Without a message in a JSON body, a short plain-text body is the
    ;; server's own words; an HTML page is not worth a line.
    (unless (and (stringp said) (not (string-empty-p said)))
      (let ((trimmed (and (stringp body)
                          (string-trim (replace-regexp-in-string "[ \t\r\n]+" " " body)))))
        (setq said (and trimmed (not (string-empty-p trimmed)) (<= (length trimmed) 200)
                        (not (string-prefix-p "<" trimmed))
                        trimmed))))
    (when (and said (not (string-match-p (regexp-quote said) text)))
      (setq text (concat text ": " said)))
    (when (numberp retry)
      (setq text (format "%s (retry after %d s)" text retry)))
    (datasourced--one-line text)))

(defun datasourced--rpc-error-text (err)
  "ERR, a JSON-RPC error object, in words without protocol jargon."
  (let ((code (plist-get err :code))
        (text (or (plist-get err :message) "unknown error")))
    (setq text (datasourced--one-line text))
    (cond
     ((eql code -1) "the daemon exited")
     ((eql code -32601)
      (format "the daemon does not know %s (is it older than this client?)"
              (or (datasourced--get (plist-get err :data) "method") "this request")))
     ((string-match "\\`\\(?:Invalid params\\|Invalid request\\|Internal error\\): *" text)
      (substring text (match-end 0)))
     (t text))))

(defun datasourced--say (format-string &rest args)
  "Show FORMAT-STRING with ARGS in the echo area, as one short line."
  (let ((text (datasourced--one-line (apply #'format-message format-string args))))
    (message "datasourced: %s"
             (if (> (length text) 200) (concat (substring text 0 199) "…") text))))

;;;; Specs

(defun datasourced--parse-json (file)
  "The JSON object in FILE, as hash tables and vectors."
  (with-temp-buffer
    (insert-file-contents file)
    (datasourced--parse-json-here file)))

(defun datasourced--parse-json-here (file)
  "The JSON object in the current buffer, read from FILE (named in errors)."
  (goto-char (point-min))
  (condition-case failure
      (if (fboundp 'json-parse-buffer)
          (json-parse-buffer :object-type 'hash-table :array-type 'array
                             :null-object nil :false-object :json-false)
        (let ((json-object-type 'hash-table) (json-array-type 'vector)
              (json-key-type 'string) (json-null nil) (json-false :json-false))
          (json-read)))
    (error (user-error "%s is not valid JSON: %s" file
                       (datasourced--one-line (error-message-string failure))))))

(defun datasourced--parse-toml (file)
  "The TOML document in FILE, read by Python's tomllib, as hash tables."
  (let ((script "import json, sys, tomllib
with open(sys.argv[1], 'rb') as f:
    json.dump(tomllib.load(f), sys.stdout)")
        (python (executable-find datasourced-python-command)))
    (unless python
      (user-error "%s: TOML specs are read with Python's tomllib, and there is no %s; \
write the spec as JSON (the same structure) or set `datasourced-python-command'"
                  file datasourced-python-command))
    (with-temp-buffer
      (let ((status (call-process python nil (list t nil) nil "-c" script (expand-file-name file))))
        (unless (eql status 0)
          (user-error "%s: cannot read it as TOML (%s, which needs Python 3.11 or later \
for tomllib, answered status %s); write the spec as JSON"
                      file python status))
        (datasourced--parse-json-here file)))))

(defun datasourced--variable (name file)
  "The value of the spec variable NAME, or an error naming it and FILE."
  (let ((cell (or (assoc name datasourced-variables)
                  (assq (intern name) datasourced-variables))))
    (unless cell
      (user-error "%s: unknown variable ${%s} (set it in `datasourced-variables'%s)"
                  (file-name-nondirectory file) name
                  (if datasourced-variables
                      (format "; it has %s"
                              (mapconcat (lambda (c) (format "%s" (car c))) datasourced-variables ", "))
                    "")))
    (format "%s" (cdr cell))))

(defun datasourced--substitute (value file)
  "VALUE with each ${NAME} in its strings replaced.
The values are those of `datasourced-variables'.
FILE is named in errors."
  (cond
   ((stringp value)
    (let ((start 0) (parts nil))
      (while (string-match "\\${\\([^}]*\\)}" value start)
        (push (substring value start (match-beginning 0)) parts)
        (push (datasourced--variable (match-string 1 value) file) parts)
        (setq start (match-end 0)))
      (if parts
          (apply #'concat (nreverse (cons (substring value start) parts)))
        value)))
   ((hash-table-p value)
    (let ((copy (make-hash-table :test #'equal)))
      (maphash (lambda (k v) (puthash k (datasourced--substitute v file) copy)) value)
      copy))
   ((vectorp value) (vconcat (mapcar (lambda (v) (datasourced--substitute v file)) value)))
   (t value)))

(defconst datasourced--display-members '("title" "columns" "show" "maxPages" "search")
  "Members of a one-source spec that are the client's.
They are not createSource params.")

(defun datasourced--parse-columns (columns file)
  "The spec's COLUMNS as a list of (KEY TITLE WIDTH); FILE is named in errors."
  (unless (and (vectorp columns) (> (length columns) 0))
    (user-error "%s: \"columns\" must be a non-empty list of keys or {\"key\", \"width\", \"title\"}" file))
  (cl-loop
   for column across columns for i from 0
   collect
   (cond
    ((and (stringp column) (not (string-empty-p column))) (list column column nil))
    ((hash-table-p column)
     (let ((key (gethash "key" column)) (width (gethash "width" column))
           (title (gethash "title" column)))
       (unless (and (stringp key) (not (string-empty-p key)))
         (user-error "%s: \"columns[%d].key\" must be a non-empty string" file i))
       (unless (or (null width) (and (integerp width) (>= width 1)))
         (user-error "%s: \"columns[%d].width\" must be an integer >= 1, got %s"
                     file i (datasourced--encode width)))
       (unless (or (null title) (stringp title))
         (user-error "%s: \"columns[%d].title\" must be a string" file i))
       (list key (or title key) width)))
    (t (user-error "%s: \"columns[%d]\" must be a key or {\"key\", \"width\", \"title\"}, got %s"
                   file i (datasourced--encode column))))))

(defun datasourced-read-spec (file)
  "The list spec in FILE (JSON, or TOML), checked and with its variables set.
Returns a plist (:sources PARAMS-LIST :show NAME :title TITLE :columns
COLUMNS), PARAMS-LIST being createSource params (hash tables), children
first.  Signals a `user-error' naming the file and the member at fault."
  (setq file (expand-file-name file))
  (unless (file-readable-p file)
    (user-error "Cannot read the spec %s" file))
  (let* ((name (file-name-nondirectory file))
         (doc (if (string-match-p "\\.toml\\'" file)
                  (datasourced--parse-toml file)
                (datasourced--parse-json file)))
         sources)
    (unless (hash-table-p doc)
      (user-error "%s: a list spec is a JSON object" name))
    (setq doc (datasourced--substitute doc name))
    (cond
     ((gethash "sources" doc)
      (let ((given (gethash "sources" doc)))
        (unless (and (vectorp given) (> (length given) 0))
          (user-error "%s: \"sources\" must be a non-empty list of createSource params" name))
        (setq sources (append given nil))))
     ((and (gethash "name" doc) (gethash "kind" doc))
      ;; The shorthand: the document is one source.
      (let ((params (copy-hash-table doc)))
        (dolist (member datasourced--display-members) (remhash member params))
        (setq sources (list params))))
     (t (user-error "%s: a list spec needs \"sources\" (or, for one source, \"name\" and \"kind\")" name)))
    (cl-loop for params in sources for i from 0
             unless (and (hash-table-p params) (stringp (gethash "name" params))
                         (not (string-empty-p (gethash "name" params))))
             do (user-error "%s: \"sources[%d]\" needs a \"name\" (a non-empty string)" name i))
    (let* ((names (mapcar (lambda (p) (gethash "name" p)) sources))
           (show (gethash "show" doc))
           (title (gethash "title" doc))
           (columns (gethash "columns" doc)))
      (cond ((null show) (setq show (car (last names))))
            ((and (vectorp show) (> (length show) 0) (cl-every #'stringp show))
             ;; An editor shows one list per spec: the first named.
             (setq show (aref show 0)))
            ((not (stringp show))
             (user-error "%s: \"show\" must be a source name or a list of names, got %s"
                         name (datasourced--encode show))))
      (unless (member show names)
        (user-error "%s: \"show\" names %s, which is not one of its sources (%s)"
                    name show (string-join names ", ")))
      (unless (or (null title) (stringp title))
        (user-error "%s: \"title\" must be a string" name))
      (list :sources sources :show show :title (or title show) :file file
            :columns (and columns (datasourced--parse-columns columns name))
            :search (datasourced--parse-search (gethash "search" doc) name)))))

(defun datasourced--parse-search (search file)
  "The spec's SEARCH member (a hash table, or nil), checked.
FILE is named in errors.  Its members: parameter (the query parameter
`datasourced-search' sets) or variable (the GraphQL variable it sets),
source, debounceMilliseconds, keyPaths (what `/' matches over)."
  (when search
    (unless (hash-table-p search)
      (user-error "%s: \"search\" must be an object: {\"parameter\" (or \"variable\"), \"source\", \"debounceMilliseconds\", \"keyPaths\"}" file))
    (maphash (lambda (key _)
               (unless (member key '("parameter" "variable" "source" "debounceMilliseconds" "keyPaths"))
                 (user-error "%s: \"search.%s\" is not a member of search (parameter, variable, source, debounceMilliseconds, keyPaths)"
                             file key)))
             search)
    (when (and (gethash "parameter" search) (gethash "variable" search))
      (user-error "%s: \"search\" has both parameter and variable: a search sets a query parameter, or a GraphQL source's variable"
                  file))
    (dolist (key '("parameter" "variable" "source"))
      (let ((value (gethash key search)))
        (unless (or (null value) (and (stringp value) (not (string-empty-p value))))
          (user-error "%s: \"search.%s\" must be a non-empty string" file key))))
    (let ((ms (gethash "debounceMilliseconds" search)) (paths (gethash "keyPaths" search)))
      (unless (or (null ms) (and (integerp ms) (<= 0 ms 10000)))
        (user-error "%s: \"search.debounceMilliseconds\" must be an integer in 0...10000" file))
      (unless (or (null paths) (and (vectorp paths) (> (length paths) 0) (cl-every #'stringp paths)))
        (user-error "%s: \"search.keyPaths\" must be a non-empty list of key paths" file)))
    search))

;;;; The state of a list (buffer-local)

(defvar-local datasourced--spec nil
  "The spec of this list (see `datasourced-read-spec').")
(defvar-local datasourced--source nil
  "The name of the source this list shows.")
(defvar-local datasourced--daemon nil "The daemon serving this list.")
(defvar-local datasourced--filter nil
  "The list's filter, once `/' made one, or nil.
A plist (:name :base :query :sent :key-paths :ready); the list then
shows the filtered source :name.")
(defvar-local datasourced--matches-read nil
  "The revision whose match positions are highlighted.")
(defvar-local datasourced--remote-sources nil
  "The remote and paginated sources the list is made from.")
(defvar-local datasourced--searched ""
  "The text of the list's last search.")
(defvar-local datasourced--created nil
  "The sources this list created, children first.")
(defvar-local datasourced--under nil
  "The names of the sources this list is made from.")
(defvar-local datasourced--sections nil
  "The rows as the daemon has them.
A list of (TITLE . ROWS), ROWS a list of values.")
(defvar-local datasourced--counted nil
  "The rows read of a counted list (placeholders: \"counted\", in force), or nil.
A hash table from a row's index to the symbol `pending' while the row
is being read, else to its value; a row not in it is not read.  Only
the rows the windows show are read (objectsInSection): a list of a
million rows opens at once, with nothing per row.")
(defvar-local datasourced--total 0
  "The number of rows of a counted list.")
(defvar-local datasourced--lines nil
  "The lines a counted list is laid out in (one per row), or nil.
Each is empty until its row is read; an unread or unloaded row's text is
drawn only as its line is displayed (`datasourced--draw-unloaded').")
(defvar-local datasourced--line-mark nil
  "A line start of a counted list and its row, (MARKER . ROW), or nil.
Rows are found from there (`datasourced--row-at'), not from the top.")
(defvar-local datasourced--last-row nil
  "The overlay drawing the last row of a counted list while it is unread.
That line has no newline to carry the text, as the other rows' do.")
(defvar-local datasourced--counted-loaded 0
  "The objects a counted list holds (describeSource's numberOfObjects).")
(defvar-local datasourced--display-timer nil
  "The timer that shows the unloaded row at point to the daemon.")
(defvar-local datasourced--displayed nil
  "The row of a counted list last shown to the daemon (willDisplay).")
(defvar-local datasourced--identity-key nil
  "The source's identity key, shown first.")
(defvar-local datasourced--sectioned nil
  "Whether the source has sections of its own (sectioned, multi).")
(defvar-local datasourced--filtered-view nil
  "Whether the source shown is a filtered one.
It keeps its child's sections, those its filter emptied included.")
(defvar-local datasourced--known nil
  "Whether `datasourced--sections' was read from the daemon.")
(defvar-local datasourced--revision nil
  "The daemon's revision that the rows show.")
(defvar-local datasourced--version 0
  "Changes made to the rows, for `datasourced--paged-at'.")
(defvar-local datasourced--paged-at nil
  "`datasourced--version' when the next page was last asked for.")
(defvar-local datasourced--reading nil
  "Whether a full read of the rows is in flight.")
(defvar-local datasourced--read-again nil
  "Whether to read the rows again once the read in flight ends.")
(defvar-local datasourced--loaded nil "Whether the last load finished.")
(defvar-local datasourced--in-flight nil
  "Whether the source shown is loading (between willLoadData and its end).
No page is asked for meanwhile: the rows may change under the request,
as a cancel takes the loading row of a first page away.")
(defvar-local datasourced--setup-failed nil
  "Whether creating the sources failed.")
(defvar-local datasourced--stale nil
  "Sources shown from the cache, unconfirmed: (NAME . CACHED-AT).")
(defvar-local datasourced--action-source nil
  "The source whose actions this list offers (the first under it to declare any).")
(defvar-local datasourced--actions nil
  "The actions `datasourced--action-source' declares, as describeSource gives them.")
(defvar-local datasourced--action-key nil
  "The identity key of `datasourced--action-source'.")
(defvar-local datasourced--mutations nil
  "The mutations not settled yet, as (MUTATION ACTION IDENTITY).")
(defvar-local datasourced--message nil
  "A message shown instead of rows (daemon not found...).")

(defvar-local datasourced-status ""
  "The state of the list.
One of loading, loaded N, error: ..., cancelled, daemon exited.")

(defvar-local datasourced-last-error nil
  "The error of the list's last failed load (a plist), or nil.")

;;;; Daemons

(cl-defstruct (datasourced--daemon (:constructor datasourced--daemon-create))
  "One datasourced process and what this Emacs knows of it."
  command connection (lists nil) (stopping nil) (exited nil)
  (created (make-hash-table :test #'equal)) ; name -> createSource params, encoded
  (outcomes (make-hash-table :test #'equal)) ; name -> loading, finished or failed
  (credentials (make-hash-table :test #'equal)) ; credential key -> `datasourced--asked'
  protocol-version server-info)

(defvar datasourced--daemons nil
  "Running daemons, as (COMMAND . DAEMON).")

(defvar datasourced--started 0
  "Daemons started so far.
Each gets a name of its own: jsonrpc's buffers go by it.")

(defun datasourced--executable (command)
  "The executable of COMMAND, or nil when there is none."
  (let ((program (car command)))
    (and (stringp program) (not (string-empty-p program))
         (if (file-name-absolute-p program)
             (and (file-executable-p program) (not (file-directory-p program)) program)
           (executable-find program)))))

(defun datasourced--not-found-text (command)
  "Why COMMAND cannot start, and what to do about it."
  (format "The daemon %s was not found%s.  Set `datasourced-command' to its path: \
M-x customize-variable RET datasourced-command, or \
\(setq datasourced-command (list \"/path/to/datasourced\")); `swift build' makes \
.build/debug/datasourced in the repository."
          (or (car command) "(none)")
          (if (and (car command) (not (file-name-absolute-p (car command)))) " on exec-path" "")))

(defun datasourced--request (daemon method params &optional on-result on-error)
  "Send METHOD with PARAMS to DAEMON.
ON-RESULT gets the result; ON-ERROR (default: say it) the error plist.
Failures in either are said, never raised into the connection."
  (let ((conn (datasourced--daemon-connection daemon))
        (fail (lambda (err)
                (if on-error
                    (datasourced--guarded method on-error err)
                  (datasourced--say "%s failed: %s" method (datasourced--rpc-error-text err))))))
    (if (or (datasourced--daemon-exited daemon) (not (jsonrpc-running-p conn)))
        (run-at-time 0 nil fail '(:code -1 :message "the daemon is not running"))
      (jsonrpc-async-request
       conn method (or params (make-hash-table))
       :success-fn (lambda (result) (when on-result (datasourced--guarded method on-result result)))
       :error-fn fail
       :timeout 60
       :timeout-fn (lambda () (funcall fail (list :message (format "no answer to %s within 60 s" method))))))))

(defun datasourced--guarded (what fn &rest args)
  "Call FN with ARGS; a failure is said, naming WHAT, instead of raised."
  (condition-case-unless-debug failure
      (apply fn args)
    (error (datasourced--say "handling %s failed: %s" what (error-message-string failure)))))

(defun datasourced--daemon-for (command)
  "The running daemon of COMMAND, started (and initialized) if need be.
Returns the daemon, or a string saying why it cannot start."
  (let ((known (cdr (assoc command datasourced--daemons))))
    (if (and known (not (datasourced--daemon-exited known))
             (not (datasourced--daemon-stopping known)))
        known
      (let ((executable (datasourced--executable command)))
        (if (not executable)
            (datasourced--not-found-text command)
          (datasourced--start command executable))))))

(defun datasourced--start (command executable)
  "Start COMMAND (its program found at EXECUTABLE) and initialize it.
Return the daemon, or a string saying why it did not start."
  (let* ((daemon (datasourced--daemon-create :command command))
         (name (format "datasourced %d" (cl-incf datasourced--started)))
         (connection
          (condition-case failure
              (make-instance
               'jsonrpc-process-connection
               :name name
               :events-buffer-scrollback-size datasourced-events-buffer-size
               :notification-dispatcher
               (lambda (_conn method params) (datasourced--on-notification daemon method params))
               :on-shutdown (lambda (_conn) (datasourced--on-exit daemon))
               :process
               (lambda ()
                 (make-process
                  :name name :command (cons executable (cdr command))
                  :connection-type 'pipe :coding 'utf-8-emacs-unix :noquery t
                  ;; jsonrpc reads the log from the buffer of this exact name.
                  :stderr (get-buffer-create (format "*%s stderr*" name)))))
            (error (error-message-string failure)))))
    (if (stringp connection)
        (format "cannot start %s: %s" executable connection)
      (datasourced--quiet-exit (jsonrpc--process connection))
      (setf (datasourced--daemon-connection daemon) connection)
      (push (cons command daemon) datasourced--daemons)
      (condition-case failure
          (let ((result (jsonrpc-request
                         connection 'initialize
                         (list :clientInfo (list :name "datasourced.el" :version datasourced-version)
                               :capabilities (list :changeValues t :changeRanges t))
                         :timeout 15)))
            (setf (datasourced--daemon-protocol-version daemon) (plist-get result :protocolVersion)
                  (datasourced--daemon-server-info daemon) (plist-get result :serverInfo))
            daemon)
        (jsonrpc-error
         (datasourced--stop daemon)
         (let ((status (process-exit-status (jsonrpc--process connection))))
           (format "%s did not start (%s)%s" executable
                   (or (alist-get 'jsonrpc-error-message (cdr failure)) "no answer")
                   (if (eql status 64)
                       "; it refused its command line: check `datasourced-command'"
                     ""))))))))

(defun datasourced--quiet-exit (process)
  "Keep jsonrpc from saying in the echo area that PROCESS exited.
Its sentinel says \"[jsonrpc] Server exited with status 0\" even when the
daemon was asked to end (a list closed, or opened again); an exit nobody
asked for is said by `datasourced--on-exit', in words of this client."
  (let ((sentinel (process-sentinel process)))
    (when (functionp sentinel)
      (set-process-sentinel
       process
       (lambda (proc change)
         (cl-letf (((symbol-function 'jsonrpc--message) #'ignore))
           (funcall sentinel proc change)))))))

(defun datasourced--stop (daemon)
  "End DAEMON cleanly: shutdown, then exit; killed if it does not end in 2 s."
  (unless (or (datasourced--daemon-stopping daemon) (datasourced--daemon-exited daemon))
    (setf (datasourced--daemon-stopping daemon) t)
    (setq datasourced--daemons (cl-remove daemon datasourced--daemons :key #'cdr))
    (let ((conn (datasourced--daemon-connection daemon)))
      (datasourced--request daemon 'shutdown nil
                            (lambda (_) (ignore-errors (jsonrpc-notify conn 'exit (make-hash-table))))
                            #'ignore)
      (run-at-time 2 nil (lambda ()
                           (let ((process (jsonrpc--process conn)))
                             (when (process-live-p process)
                               (delete-process process))))))))

(defun datasourced--on-exit (daemon)
  "DAEMON's process ended: its lists say so (unless it was asked to end)."
  (setf (datasourced--daemon-exited daemon) t)
  (setq datasourced--daemons (cl-remove daemon datasourced--daemons :key #'cdr))
  (unless (datasourced--daemon-stopping daemon)
    (let ((status (process-exit-status (jsonrpc--process (datasourced--daemon-connection daemon)))))
      (dolist (buffer (datasourced--daemon-lists daemon))
        (when (buffer-live-p buffer)
          (with-current-buffer buffer (datasourced--set-status "daemon exited"))))
      (datasourced--say "the daemon exited (status %s); g in a list starts it again" status))))

(defun datasourced-stop-all ()
  "Stop every daemon, waiting (at most a second) for them to end.
The wait reads the daemons' output alone (no keyboard, no timers): in
an Emacs killed as its terminal goes away (a tmux or ssh session closed),
`jsonrpc-request' never returns, and Emacs would spin for ever.  The
daemons are taken off the list first, so that this has nothing left to
do if it runs again meanwhile."
  (dolist (entry (prog1 datasourced--daemons (setq datasourced--daemons nil)))
    (let* ((daemon (cdr entry))
           (conn (datasourced--daemon-connection daemon))
           (process (jsonrpc--process conn))
           (answered nil)
           (deadline (+ (float-time) 1)))
      (setf (datasourced--daemon-stopping daemon) t)
      (ignore-errors
        (jsonrpc-async-request conn 'shutdown (make-hash-table)
                               :success-fn (lambda (_) (setq answered t))
                               :error-fn (lambda (_) (setq answered t))
                               :timeout 1)
        (while (and (not answered) (process-live-p process) (< (float-time) deadline))
          (accept-process-output process 0.05 nil 1))
        (jsonrpc-notify conn 'exit (make-hash-table))
        (while (and (process-live-p process) (< (float-time) deadline))
          (accept-process-output process 0.05 nil 1)))
      (ignore-errors (delete-process process)))))

(add-hook 'kill-emacs-hook #'datasourced-stop-all)

(defun datasourced--base-load-end-p (kind source)
  "Whether KIND about SOURCE ends the load the list's filter began during.
A filtered source made while its child loads has no cycle of its own
for that load: the child's final event (finishedLoading, failedWithError)
ends it for the list, once, unless the filtered source began a cycle of
its own since."
  (let ((filter datasourced--filter))
    (when (and filter (memq kind '(finishedLoading failedWithError))
               (plist-get filter :base-loading)
               (equal source (plist-get filter :base))
               (equal datasourced--source (plist-get filter :name)))
      (setq datasourced--filter (plist-put filter :base-loading nil))
      t)))

(defun datasourced--on-notification (daemon method params)
  "Route DAEMON's notification METHOD (with PARAMS) to the lists it concerns."
  (let* ((name (symbol-name method))
         (kind (and (string-prefix-p "dataSource/" name) (intern (substring name 11))))
         (source (plist-get params :source))
         (outcomes (datasourced--daemon-outcomes daemon))
         shown)
    (when (and (eq kind 'didSettleMutation) source)
      (datasourced--on-settle daemon params)
      (setq kind nil))
    (when (and kind source)
      (pcase kind
        ('willLoadData (puthash source 'loading outcomes))
        ('finishedLoading (puthash source 'finished outcomes))
        ('failedWithError (puthash source 'failed outcomes)))
      (dolist (buffer (datasourced--daemon-lists daemon))
        (when (buffer-live-p buffer)
          (with-current-buffer buffer
            (let ((base-end (datasourced--base-load-end-p kind source)))
              (when (or (equal source datasourced--source) base-end
                        (and (eq kind 'didChangeFreshness) (member source datasourced--under)))
                (when (or (equal source datasourced--source) base-end) (setq shown t))
                (datasourced--guarded name #'datasourced--on-event kind params))))))
      ;; Said once per failure, however many lists show the source; a failure
      ;; for want of a credential's allowance asks instead (the no says it).
      (when (and shown (eq kind 'failedWithError)
                 (not (datasourced--ask-credentials daemon source (plist-get params :error))))
        (let ((failure (plist-get params :error)))
          (if (equal (plist-get failure :kind) "cancelled")
              (datasourced--say "%s: load cancelled" source)
            (datasourced--say "%s: %s" source (datasourced--fetch-error-text failure t))))))))

;;;; Credentials

;; A header value the daemon reads from its environment or a file
;; ({"env": "GITHUB_TOKEN"}, {"file": "~/.config/x/token"}) goes only to the
;; origins the user allowed it for.  A shown list whose load failed for want of
;; that (kind credentialNotAllowed) asks the person, once however many lists
;; wait on the same credential and origin; a yes is recorded by the daemon
;; (allowCredential) and the lists waiting load again (fetchData).

(cl-defstruct (datasourced--asked (:constructor datasourced--asked-create))
  "What the person was asked about one credential and origin, and who waits."
  request (state 'asking) (sources nil))

(defun datasourced-credential-requests (failure)
  "The credentials FAILURE (a fetch error) lacked, its children's included.
Each once, as a plist (:kind KIND :name NAME :origin ORIGIN :key KEY), KIND
being \"env\" or \"file\"."
  (let ((found nil) (pending (list failure)))
    (while pending
      (let* ((f (pop pending))
             (credential (and (datasourced--object-p f) (plist-get f :credential)))
             (origin (and (datasourced--object-p f) (plist-get f :origin))))
        (when (and (equal (plist-get f :kind) "credentialNotAllowed")
                   (datasourced--object-p credential) (stringp origin))
          (let* ((kind (cond ((stringp (plist-get credential :env)) "env")
                             ((stringp (plist-get credential :file)) "file")))
                 (name (and kind (plist-get credential (intern (concat ":" kind)))))
                 (key (and kind (concat kind "\n" name "\n" origin))))
            (when (and kind (not (cl-find key found :key (lambda (r) (plist-get r :key)) :test #'equal)))
              (push (list :kind kind :name name :origin origin :key key) found))))
        (when (datasourced--object-p f)
          (let ((failures (plist-get f :failures)))
            (when (vectorp failures) (setq failures (append failures nil)))
            (dolist (child (and (listp failures) failures))
              (when (datasourced--object-p child)
                (setq pending (append pending (list (plist-get child :error))))))))))
    (nreverse found)))

(defun datasourced--credential-what (request)
  "The credential of REQUEST in words.
That is \"the environment variable GITHUB_TOKEN\" or \"the file ~/.config/x/token\"."
  (concat (if (equal (plist-get request :kind) "env") "the environment variable " "the file ")
          (plist-get request :name)))

(defun datasourced-credential-question (request)
  "The question asked about REQUEST (from `datasourced-credential-requests')."
  (format "Allow the daemon to send %s to %s? "
          (datasourced--credential-what request) (plist-get request :origin)))

(defun datasourced--ask-credential (daemon asked)
  "Ask about ASKED's credential (from a timer, not inside the notification).
A yes is sent to DAEMON, then every source waiting on it loads again."
  (run-at-time
   0 nil
   (lambda ()
     (unless (or (datasourced--daemon-exited daemon) (datasourced--daemon-stopping daemon))
       (let ((request (datasourced--asked-request asked)))
         (if (not (y-or-n-p (datasourced-credential-question request)))
             (progn
               (setf (datasourced--asked-state asked) 'declined
                     (datasourced--asked-sources asked) nil)
               (datasourced--say "%s not sent to %s: not allowed (%s asks again)"
                                 (datasourced--credential-what request) (plist-get request :origin)
                                 (substitute-command-keys
                                  "\\<datasourced-list-mode-map>\\[revert-buffer]")))
           (setf (datasourced--asked-state asked) 'allowing)
           (datasourced--request
            daemon 'allowCredential
            (list (intern (concat ":" (plist-get request :kind))) (plist-get request :name)
                  :origin (plist-get request :origin))
            (lambda (result)
              (setf (datasourced--asked-state asked) 'allowed)
              (datasourced--say "allowed %s to be sent to %s (recorded in %s)"
                                (datasourced--credential-what request)
                                (or (plist-get result :origin) (plist-get request :origin))
                                (plist-get result :path))
              (let ((waiting (sort (copy-sequence (datasourced--asked-sources asked)) #'string<)))
                (setf (datasourced--asked-sources asked) nil)
                (dolist (source waiting)
                  (datasourced--request daemon 'fetchData (list :source source)))))
            (lambda (err)
              (remhash (plist-get request :key) (datasourced--daemon-credentials daemon))
              (datasourced--say "allowCredential failed: %s" (datasourced--rpc-error-text err))))))))))

(defun datasourced--ask-credentials (daemon source failure)
  "Ask about each credential FAILURE lacked that nobody was asked about yet.
SOURCE, a source of DAEMON shown in a list, loads again after a yes.
Return non-nil while a question is open or a yes is being recorded for all
of them (the failure is then not said); nil when the person said no (until
a refresh), or the credential was allowed and the load still failed."
  (let ((requests (datasourced-credential-requests failure))
        (table (datasourced--daemon-credentials daemon))
        (waiting t))
    (dolist (request requests)
      (let ((asked (gethash (plist-get request :key) table)))
        (unless asked
          (setq asked (datasourced--asked-create :request request))
          (puthash (plist-get request :key) asked table)
          (datasourced--ask-credential daemon asked))
        (if (memq (datasourced--asked-state asked) '(asking allowing))
            (cl-pushnew source (datasourced--asked-sources asked) :test #'equal)
          (setq waiting nil)
          (when (eq (datasourced--asked-state asked) 'allowed)
            ;; Allowed, and still refused: said, not asked again at once (no
            ;; loop); the next failure asks again.
            (remhash (plist-get request :key) table)))))
    (and requests waiting)))

(defun datasourced--forget-declined (daemon)
  "Forget the noes said to DAEMON: the next failure asks again."
  (let ((table (datasourced--daemon-credentials daemon)))
    (maphash (lambda (key asked)
               (when (eq (datasourced--asked-state asked) 'declined)
                 (remhash key table)))
             table)))

;;;; The list buffer

(defvar datasourced-list-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "RET") #'datasourced-select)
    (define-key map (kbd "C-c C-k") #'datasourced-cancel)
    (define-key map (kbd "R") #'datasourced-retry)
    (define-key map (kbd "q") #'datasourced-quit)
    (define-key map (kbd "/") #'datasourced-filter)
    (define-key map (kbd "s") #'datasourced-search)
    map)
  "Keys of `datasourced-list-mode', besides those of `tabulated-list-mode'.")

;;;###autoload
(define-derived-mode datasourced-list-mode tabulated-list-mode "Datasourced"
  "A list of the rows of a data source of a datasourced daemon.
Sections have a header row; loading, no-results and error rows are
the daemon's placeholders.  Point near the end (`datasourced-page-ahead')
or the last row scrolled into view loads the next page.

\\{datasourced-list-mode-map}"
  (setq tabulated-list-printer #'datasourced--print-entry
        tabulated-list-padding 1
        tabulated-list-sort-key nil
        truncate-lines t
        mode-line-process '(:eval (datasourced--mode-line-status)))
  (setq-local revert-buffer-function (lambda (&rest _) (datasourced-refresh)))
  (add-hook 'post-command-hook #'datasourced--after-command nil t)
  (add-hook 'window-scroll-functions #'datasourced--after-scroll nil t)
  (add-hook 'kill-buffer-hook #'datasourced--release nil t))

(defun datasourced--mode-line-status ()
  "The status for the mode line, kept short."
  (let ((text datasourced-status))
    (when (> (length text) 50)
      (setq text (concat (substring text 0 49) "…")))
    (concat " " text)))

(defun datasourced--set-status (state)
  "Set the list's status to STATE, followed by the cached mark while stale."
  (setq datasourced-status
        (if datasourced--stale
            (concat state " " (datasourced--stale-mark (cdar datasourced--stale)))
          state))
  (force-mode-line-update))

(defun datasourced--stale-mark (cached-at)
  "The mark of rows the server has not confirmed, cached at CACHED-AT.
Stale rows with no time are a former query's, up until the new query's
rows come (updateSource, protocol 1.4): \"[updating]\"."
  (let ((time (and (stringp cached-at) (ignore-errors (parse-iso8601-time-string cached-at)))))
    (cond
     ((null cached-at) "[updating]")
     ((not time) "[cached]")
     (t
      (format "[cached %s]"
              (format-time-string
               (if (equal (format-time-string "%F" time) (format-time-string "%F")) "%H:%M" "%F %H:%M")
               time))))))

;;;; Rendering

(defun datasourced--columns ()
  "The columns of this list: (KEY TITLE WIDTH) for each."
  (or (plist-get datasourced--spec :columns) '((nil "Object" nil))))

(defun datasourced--default-text (value)
  "VALUE as `key: value' pairs, the identity key first, or as JSON."
  (if (not (datasourced--object-p value))
      (datasourced--scalar-text value)
    (let ((pairs nil) (id nil)
          (identity (and (stringp datasourced--identity-key)
                         (intern (concat ":" datasourced--identity-key)))))
      (cl-loop for (key val) on value by #'cddr
               do (let ((text (format "%s: %s" (substring (symbol-name key) 1)
                                      (datasourced--one-line (datasourced--scalar-text val)))))
                    (if (eq key identity) (setq id text) (push text pairs))))
      (string-join (append (and id (list id)) (sort pairs #'string<)) "  "))))

(defun datasourced--cell (value key)
  "The text of the column KEY (nil: the whole object) for VALUE."
  (datasourced--one-line
   (if key
       (if (datasourced--object-p value)
           (datasourced--scalar-text (datasourced--at-key-path value key))
         (datasourced--scalar-text value))
     (datasourced--default-text value))))

(defun datasourced--row-cells (value columns)
  "The cells of the row VALUE for COLUMNS, a vector.
A row with an action not settled yet is dim, its last cell marked."
  (let ((cells (mapcar (lambda (c) (datasourced--cell value (car c))) columns)))
    (when (datasourced--pending-p value)
      (setq cells (mapcar (lambda (cell) (propertize cell 'face 'datasourced-pending)) cells))
      (setcar (last cells)
              (concat (car (last cells)) (propertize datasourced-pending-mark 'face 'datasourced-pending))))
    (apply #'vector cells)))

(defun datasourced--placeholder-text (value kind)
  "The text of a placeholder row VALUE of KIND."
  (if (eq kind 'error)
      (concat "✗ error: " (datasourced--fetch-error-text (plist-get value :error)))
    (let ((text (or (alist-get kind datasourced-placeholder-texts) (format "<%s>" kind))))
      (if (eq kind 'unloaded)
          (datasourced--unloaded-text (or (plist-get value :index) 0))
        text))))

(defun datasourced--unloaded-text (index)
  "The text of the unloaded row at item INDEX (from 0)."
  (format (alist-get 'unloaded datasourced-placeholder-texts) (1+ index)))

(defun datasourced--header-shown-p (section)
  "Whether SECTION, (TITLE . ROWS), has a header row.
Only sectioned and multi sources have them; a section titled null that
holds only placeholders (a trailing loading row) has none, nor, in a
filtered view, a section none of whose rows passes (it may hold the
no-results row): only a row, or an error, shows its header."
  (and datasourced--sectioned
       (if datasourced--filtered-view
           (cl-some (lambda (value) (memq (datasourced--placeholder-kind value) '(nil error)))
                    (cdr section))
         (or (car section)
             (not (cl-every #'datasourced--placeholder-kind (cdr section)))))))

(defun datasourced--entries ()
  "The entries of `tabulated-list-entries' for the rows."
  (if datasourced--message
      (list (list '(message) (vector datasourced--message)))
    (let ((columns (datasourced--columns)) (entries nil) (s 0))
      (dolist (section datasourced--sections)
        (when (datasourced--header-shown-p section)
          (push (list (list 'header s)
                      (vector (datasourced--one-line (datasourced--scalar-text (or (car section) "null")))))
                entries))
        (let ((i 0))
          (dolist (value (cdr section))
            (let ((kind (datasourced--placeholder-kind value)))
              (push (if kind
                        (list (list kind s i) (vector (datasourced--placeholder-text value kind)))
                      ;; The row's identity too: point keeps its row wherever it goes.
                      (list (list 'row s i (datasourced--row-identity value))
                            (datasourced--row-cells value columns)))
                    entries))
            (setq i (1+ i))))
        (setq s (1+ s)))
      ;; A failure is a row even when the source stores no error placeholder.
      (when (and datasourced-last-error
                 (not (equal (plist-get datasourced-last-error :kind) "cancelled"))
                 (not (cl-some (lambda (section)
                                 (cl-some (lambda (v) (eq (datasourced--placeholder-kind v) 'error))
                                          (cdr section)))
                               datasourced--sections)))
        (push (list '(failed)
                    (vector (datasourced--placeholder-text
                             (list :error datasourced-last-error) 'error)))
              entries))
      ;; No row at all: a line saying why, rather than a blank buffer.
      (let ((state (and (null entries) (datasourced--empty-state-text))))
        (when state
          (push (list '(state) (vector state)) entries)))
      (nreverse entries))))

(defun datasourced--empty-state-text ()
  "The line shown in a list without any row, or nil while loading."
  (cond
   ((not datasourced--known) nil)
   ((equal (plist-get datasourced-last-error :kind) "cancelled")
    (format "load cancelled (%s loads again)"
            (substitute-command-keys "\\<datasourced-list-mode-map>\\[revert-buffer]")))
   ((and datasourced--loaded (not datasourced--in-flight)) "(no rows)")))

(defun datasourced--format (entries)
  "The `tabulated-list-format' for ENTRIES.
Widths are the spec's, else the widest cell's."
  (let ((columns (datasourced--columns)) (n 0) (format nil))
    (dolist (column columns)
      (let ((width (nth 2 column)) (title (nth 1 column)))
        (unless width
          (setq width (length title))
          (dolist (entry entries)
            (when (eq (car (car entry)) 'row)
              (setq width (max width (string-width (aref (cadr entry) n))))))
          (setq width (min width (max 1 datasourced-column-max-width))))
        (push (list title width nil) format))
      (setq n (1+ n)))
    (apply #'vector (nreverse format))))

(defun datasourced--print-entry (id cols)
  "Print the entry ID with COLS: rows as columns, the others across the list."
  (if (eq (car id) 'row)
      (tabulated-list-print-entry id cols)
    (let ((beg (point))
          (face (pcase (car id)
                  ('header 'datasourced-section)
                  ((or 'error 'failed 'message) 'datasourced-error)
                  ('unloaded 'datasourced-unloaded)
                  (_ 'datasourced-placeholder))))
      (insert (make-string tabulated-list-padding ?\s)
              (propertize (aref cols 0) 'face face)
              "\n")
      (add-text-properties beg (point) `(tabulated-list-id ,id tabulated-list-entry ,cols)))))

(defun datasourced--render ()
  "Print the rows again, each window keeping its row (or its line).
A counted list's lines are redrawn row by row instead (a failed page
leaves its rows unloaded: there is no error row to show)."
  (if (and datasourced--counted (not datasourced--message))
      nil
    (datasourced--render-rows)))

(defun datasourced--row-identity (value)
  "The identity of the row VALUE (its identity key's value), or nil."
  (and (stringp datasourced--identity-key) (datasourced--object-p value)
       (datasourced--get value datasourced--identity-key)))

(defun datasourced--view (&optional window)
  "Where point is in WINDOW (nil: the buffer's point), to come back to.
A plist: :id, the entry at point (a row's with its identity), :line,
and, for a window, :above, the lines between its start and point."
  (if (not window)
      (list :id (tabulated-list-get-id) :line (line-number-at-pos))
    (with-selected-window window
      (list :id (tabulated-list-get-id) :line (line-number-at-pos)
            :above (count-lines (window-start) (line-beginning-position))))))

(defun datasourced--goto-view (view)
  "Move point to VIEW's row: the same object, else the same entry, else line."
  (let* ((id (plist-get view :id))
         (identity (and (eq (car-safe id) 'row) (nth 3 id))))
    (goto-char (point-min))
    (while (and id (not (eobp))
                (not (let ((here (tabulated-list-get-id)))
                       (if identity
                           (and (eq (car-safe here) 'row) (equal (nth 3 here) identity))
                         (equal here id)))))
      (forward-line 1))
    (when (or (null id) (eobp))
      (goto-char (point-min))
      (forward-line (1- (min (plist-get view :line) (max 1 (count-lines (point-min) (point-max)))))))))

(defun datasourced--fitting-start (window above)
  "Where WINDOW should start for point to be ABOVE lines below its top.
Point stays in view, and the list's end is not left mid-window with
rows hidden above it: a list the window can hold shows from its top."
  (let ((height (max 1 (window-body-height window))))
    (save-excursion
      (let ((wanted (progn (forward-line (- (min above (1- height)))) (point)))
            ;; The last line to show: the last row's, or point's past it.
            (last (max (line-beginning-position)
                       (progn (goto-char (point-max))
                              (when (and (bolp) (not (bobp))) (forward-line -1))
                              (point)))))
        (goto-char last)
        (forward-line (- (1- height)))
        (min wanted (point))))))

(defun datasourced--show-view (window view)
  "Show VIEW (from `datasourced--view') in WINDOW: point's row, its place."
  (with-selected-window window
    (datasourced--goto-view view)
    (set-window-start window (datasourced--fitting-start window (or (plist-get view :above) 0)) t)))

(defun datasourced--render-rows ()
  "Print `datasourced--sections', each window keeping its row (or its line).
A row is found by its identity when it has one: a filter or a page that
moves it does not move point to the row that took its place."
  (let* ((entries (datasourced--entries))
         (windows (get-buffer-window-list (current-buffer) nil t))
         (views (mapcar (lambda (window) (cons window (datasourced--view window))) windows))
         (own (datasourced--view)))
    (datasourced--forget-layout)
    (setq tabulated-list-format (datasourced--format entries)
          tabulated-list-entries entries)
    (tabulated-list-init-header)
    (tabulated-list-print nil)
    (datasourced--goto-view own)
    (dolist (view views)
      (datasourced--show-view (car view) (cdr view)))))

;;;; Reading the rows

(defun datasourced--read (&optional done)
  "Read every row of the list from the daemon, then render them.
DONE, if given, is called with the source's description afterwards."
  (if datasourced--reading
      (setq datasourced--read-again t)
    (setq datasourced--reading t datasourced--read-again nil)
    (let ((buffer (current-buffer)) (daemon datasourced--daemon) (source datasourced--source))
      (datasourced--request
       daemon 'describeSource (list :source source)
       (lambda (description)
         (if (datasourced--counted-description-p description)
             (when (buffer-live-p buffer)
               (with-current-buffer buffer
                 (setq datasourced--reading nil)
                 (datasourced--take-counted description done)))
         (datasourced--request
          daemon 'allObjects (list :source source :withRevision t)
          (lambda (result)
            (when (buffer-live-p buffer)
              (with-current-buffer buffer
                (setq datasourced--reading nil)
                (datasourced--take description result done))))
          (lambda (err) (datasourced--read-failed buffer err)))))
       (lambda (err) (datasourced--read-failed buffer err))))))

(defun datasourced--read-failed (buffer err)
  "A read for BUFFER's list failed with ERR: said in the status."
  (when (buffer-live-p buffer)
    (with-current-buffer buffer
      (setq datasourced--reading nil)
      (datasourced--set-status (concat "error: " (datasourced--rpc-error-text err))))))

(defun datasourced--take (description result done)
  "Take the rows of RESULT (allObjects), laid out as DESCRIPTION has them.
Read again when they describe different revisions (a change came
between the two answers), or when a change came during the read.
DONE is called with DESCRIPTION once the rows are known."
  (let* ((objects (append (if (vectorp result) result (plist-get result :objects)) nil))
         (revision (and (not (vectorp result)) (plist-get result :revision)))
         (counts (append (plist-get description :counts) nil))
         (titles (append (plist-get description :sectionTitles) nil)))
    (if (or datasourced--read-again
            (not (equal revision (plist-get description :revision)))
            (/= (apply #'+ counts) (length objects)))
        (datasourced--read done)
      (setq datasourced--sections
            (cl-loop for count in counts for title in titles
                     collect (cons title (cl-loop repeat count collect (pop objects))))
            datasourced--revision revision
            datasourced--identity-key (plist-get description :identityKey)
            ;; A filtered source keeps its child's sections (the list showed the
            ;; child before its first filter).
            ;; (`datasourced--read-and-load' looks when the spec shows a filtered one.)
            datasourced--sectioned (if (equal (plist-get description :kind) "filtered")
                                       datasourced--sectioned
                                     (member (plist-get description :kind) '("sectioned" "multi")))
            datasourced--filtered-view (equal (plist-get description :kind) "filtered")
            datasourced--known t
            datasourced--counted nil
            datasourced--version (1+ datasourced--version))
      (datasourced--render)
      (setq datasourced--matches-read nil)
      (datasourced--highlight-matches)
      (when done (funcall done description))
      (datasourced--update-loaded-status))))

;;;; Change sets

(defun datasourced--path (path)
  "PATH, a JSON [section, item], as a cons."
  (cons (aref path 0) (aref path 1)))

(defun datasourced--expand-paths (paths)
  "PATHS of a change set as [SECTION ITEM] vectors.
A range [SECTION ITEM COUNT] (the changeRanges capability) is COUNT of them."
  (let ((result nil))
    (dolist (path (append paths nil))
      (if (< (length path) 3)
          (push path result)
        (dotimes (k (aref path 2))
          (push (vector (aref path 0) (+ (aref path 1) k)) result))))
    (nreverse result)))

(defun datasourced--rows-named (paths)
  "How many rows PATHS name, ranges counted whole."
  (cl-loop for path across (or paths []) sum (if (< (length path) 3) 1 (aref path 2))))

(defun datasourced--only-updates-p (changes)
  "Whether a change set has only rows updated in place (a counted list's pages).
CHANGES is the change set."
  (cl-every (lambda (key) (zerop (length (plist-get changes key))))
            '(:deleted :inserted :moved :deletedSections :insertedSections)))

(defun datasourced--apply (changes values)
  "The rows after a didChange's change set, with the VALUES of its rows.
CHANGES is the change set; an error is signalled when it does not fit
the rows."
  (let ((removed (make-hash-table :test #'equal))
        (placed (make-hash-table :test #'equal))
        (dropped (append (plist-get changes :deletedSections) nil))
        (inserted (datasourced--expand-paths (plist-get changes :inserted)))
        (inserted-values (append (plist-get values :inserted) nil))
        (updated (datasourced--expand-paths (plist-get changes :updated)))
        (updated-values (append (plist-get values :updated) nil))
        (old (apply #'vector (mapcar (lambda (s) (apply #'vector (cdr s))) datasourced--sections)))
        (titles (mapcar #'car datasourced--sections)))
    (dolist (path (datasourced--expand-paths (plist-get changes :deleted)))
      (puthash (datasourced--path path) t removed))
    (dolist (move (append (plist-get changes :moved) nil))
      (let* ((from (datasourced--path (plist-get move :from))))
        (puthash from t removed)
        (puthash (datasourced--path (plist-get move :to))
                 (aref (aref old (car from)) (cdr from)) placed)))
    (unless (= (length inserted) (length inserted-values))
      (error "The change set has no values for its new rows"))
    (cl-loop for path in inserted for value in inserted-values
             do (puthash (datasourced--path path) value placed))
    ;; Old coordinates: the rows kept, section by section.
    (let* ((kept (cl-loop for rows across old for s from 0
                          unless (memq s dropped)
                          collect (cons (nth s titles)
                                        (cl-loop for value across rows for i from 0
                                                 unless (gethash (cons s i) removed) collect value))))
           ;; New coordinates: kept rows in order, the placed ones at their places.
           (sections
            (cl-loop for (title . rows) in kept for s from 0
                     collect
                     (let ((i 0) (result nil))
                       (while (or rows (gethash (cons s i) placed))
                         (let ((value (gethash (cons s i) placed 'datasourced--none)))
                           (if (eq value 'datasourced--none)
                               (push (pop rows) result)
                             (remhash (cons s i) placed)
                             (push value result)))
                         (setq i (1+ i)))
                       (cons title (nreverse result))))))
      (when (> (hash-table-count placed) 0)
        (error "The change set places rows outside the sections"))
      (unless (= (length updated) (length updated-values))
        (error "The change set has no values for its updated rows"))
      (cl-loop for path in updated for value in updated-values
               do (let ((section (nth (aref path 0) sections)))
                    (unless (and section (< (aref path 1) (length (cdr section))))
                      (error "An updated row is outside the sections"))
                    (setcar (nthcdr (aref path 1) (cdr section)) value)))
      sections)))

(defun datasourced--on-change (params)
  "A dataSource/didChange (PARAMS): applied if it follows the rows, else read."
  (let ((revision (plist-get params :revision))
        (changes (plist-get params :changes)))
    (cond
     ((not datasourced--known)
      (when datasourced--reading (setq datasourced--read-again t)))
     ((and revision datasourced--revision (<= revision datasourced--revision))) ; had it
     ((or (null revision) (not (equal (plist-get params :previousRevision) datasourced--revision))
          ;; New sections' titles come with no change set: read them all.
          (> (length (plist-get changes :insertedSections)) 0)
          ;; A counted list taking its size, or changing it: read its description.
          (and datasourced--counted (not (datasourced--only-updates-p changes)))
          ;; A change too big to carry its values (a million placeholders) is read.
          (and (not datasourced--counted) (null (plist-get params :values))
               (or (> (length (plist-get changes :inserted)) 0)
                   (> (length (plist-get changes :updated)) 0)))
          (> (datasourced--rows-named (plist-get changes :deleted)) 10000))
      (setq datasourced--known nil)
      (datasourced--read))
     (datasourced--counted
      (datasourced--apply-counted changes (plist-get params :values))
      (setq datasourced--revision revision
            datasourced--version (1+ datasourced--version))
      (datasourced--read-shown)
      (datasourced--schedule-display))
     (t
      (let ((sections (condition-case nil
                          (datasourced--apply changes (plist-get params :values))
                        (error 'datasourced--misfit))))
        (if (eq sections 'datasourced--misfit)
            (progn (setq datasourced--known nil) (datasourced--read))
          (setq datasourced--sections sections
                datasourced--revision revision
                datasourced--version (1+ datasourced--version))
          (datasourced--render)
          (datasourced--highlight-matches)
          (datasourced--update-loaded-status)))))))

;;;; Events

(defun datasourced--count ()
  "The objects shown, placeholders left out."
  (cl-loop for section in datasourced--sections
           sum (cl-count-if-not #'datasourced--placeholder-kind (cdr section))))

(defun datasourced--update-loaded-status ()
  "Set the status to `loaded N' when the last load finished.
Not while the rows are being read: they are not the ones counted yet
\(a counted list taking its size said `loaded 0' before its rows came)."
  (when (and datasourced--loaded (not datasourced--reading))
    (datasourced--set-status
     (if datasourced--counted
         (format "loaded %d of %d" datasourced--counted-loaded datasourced--total)
       (format "loaded %d" (datasourced--count))))))

(defun datasourced--on-event (kind params)
  "A dataSource/KIND notification (PARAMS) about this list's source."
  (pcase kind
    ('didChange (datasourced--on-change params))
    ('didChangeFreshness
     (let ((source (plist-get params :source)))
       (setq datasourced--stale (assoc-delete-all source datasourced--stale))
       (when (eq (plist-get params :stale) t)
         (push (cons source (plist-get params :cachedAt)) datasourced--stale))
       (datasourced--set-status (replace-regexp-in-string " \\[\\(?:cached[^]]*\\|updating\\)\\]\\'" "" datasourced-status))))
    ('willLoadData
     (setq datasourced--loaded nil datasourced--in-flight t)
     (when datasourced--filter
       (setq datasourced--filter (plist-put datasourced--filter :base-loading nil)))
     (when datasourced-last-error
       (setq datasourced-last-error nil)
       (datasourced--render))
     (datasourced--set-status "loading"))
    ('finishedLoading
     (setq datasourced--loaded t datasourced--in-flight nil)
     (unless (or datasourced--counted (cl-some #'cdr datasourced--sections))
       ;; An empty list says so (its last change came while it was loading).
       (datasourced--render))
     (if datasourced--counted
         (datasourced--count-loaded)
       (datasourced--update-loaded-status))
     (when datasourced--filter
       ;; A page with no row that passes leaves the loading row where point is:
       ;; no command follows to ask for the next, so the row asks for it itself
       ;; (the page it asked for before is in: it may ask again).
       (setq datasourced--paged-at nil)
       (dolist (window (get-buffer-window-list (current-buffer) nil t))
         (with-selected-window window (datasourced--maybe-page window))))
     (run-hooks 'datasourced-loaded-hook))
    ('failedWithError
     (let ((failure (plist-get params :error)))
       (setq datasourced--loaded nil datasourced--in-flight nil datasourced-last-error failure)
       (datasourced--render)
       (datasourced--set-status
        (if (equal (plist-get failure :kind) "cancelled")
            "cancelled"
          (concat "error: " (datasourced--fetch-error-text failure t))))
       (run-hook-with-args 'datasourced-failed-hook failure)))))

;;;; Counted lists (placeholders: "counted", protocol 1.5)

(defun datasourced--counted-description-p (description)
  "Whether DESCRIPTION is of a source whose counted placeholders are in force.
Its list has its full size (a million rows, maybe), so it is read lazily."
  (let ((placeholders (plist-get description :placeholders)))
    (and (equal (plist-get description :kind) "paginated")
         (datasourced--object-p placeholders)
         (equal (plist-get placeholders :inForce) "counted"))))

(defun datasourced--take-counted (description done)
  "Show a counted list as DESCRIPTION has it: a line per row, unread.
The rows the windows show are then read.  DONE gets DESCRIPTION."
  (if datasourced--read-again
      (datasourced--read done)
    (let ((total (or (car (append (plist-get description :counts) nil)) 0)))
      (setq datasourced--counted (make-hash-table :test #'eql)
            datasourced--total total
            datasourced--counted-loaded (or (plist-get description :numberOfObjects) 0)
            datasourced--sections nil
            datasourced--revision (plist-get description :revision)
            datasourced--identity-key (plist-get description :identityKey)
            datasourced--sectioned nil
            datasourced--filtered-view nil
            datasourced--known t
            datasourced--displayed nil
            datasourced--version (1+ datasourced--version))
      (datasourced--render-counted)
      (when done (funcall done description))
      (datasourced--update-loaded-status)
      (datasourced--read-shown)
      (datasourced--schedule-display))))

(defun datasourced--counted-format ()
  "The `tabulated-list-format' of a counted list.
Its rows are not all read: a column without a width of its own in the
spec is `datasourced-column-max-width' wide."
  (apply #'vector
         (mapcar (lambda (column)
                   (list (nth 1 column)
                         (or (nth 2 column) (max (length (nth 1 column)) datasourced-column-max-width))
                         nil))
                 (datasourced--columns))))

(defun datasourced--render-counted ()
  "Lay out a counted list: a line per row, empty until its row is read.
A million rows are a million newlines, inserted at once; the `… row N'
of an unread or unloaded row is drawn only as its line is displayed
\(`datasourced--draw-unloaded').  A list laid out already keeps its
lines, and each window its place: the lines with a text are emptied
\(but those the windows show, read again at once, whose text stays until
their rows come) and lines are added or taken away at the end, so a
list read again deletes and inserts no million lines."
  (let ((inhibit-read-only t)
        (total datasourced--total)
        (lines datasourced--lines))
    (setq tabulated-list-format (datasourced--counted-format)
          tabulated-list-entries nil)
    (tabulated-list-init-header)
    (unless (memq #'datasourced--draw-unloaded jit-lock-functions)
      ;; Chunks of a few window heights of empty lines: the rows drawn are those shown.
      (setq-local jit-lock-chunk-size 64)
      (jit-lock-register #'datasourced--draw-unloaded))
    (datasourced--forget-line-mark)
    (if (null lines)
        (let ((line (line-number-at-pos)))
          (erase-buffer)
          ;; No newline after the last row: end-of-buffer is on it.
          (datasourced--insert-newlines (1- total))
          (goto-char (point-min))
          (forward-line (1- line)))
      (save-excursion
        (datasourced--empty-lines (datasourced--shown-spans))
        (cond
         ((zerop total) (erase-buffer))
         ((> total lines)
          (goto-char (point-max))
          (datasourced--insert-newlines (- total (max lines 1))))
         ((< total lines)
          (goto-char (point-min))
          (forward-line (1- total))
          (delete-region (line-end-position) (point-max))))))
    (datasourced--forget-line-mark)
    (setq datasourced--lines total)
    (datasourced--draw-last-row)))

(defun datasourced--insert-newlines (count)
  "Insert COUNT newlines (none if it is not positive).
A few thousand at a time: a million make no string of a million."
  (let ((chunk (make-string 4096 ?\n)))
    (while (>= count 4096)
      (insert chunk)
      (setq count (- count 4096)))
    (when (> count 0)
      (insert (substring chunk 0 count)))))

(defun datasourced--empty-lines (kept)
  "Empty the lines of a counted list that have a text, but those of KEPT.
KEPT is a list of spans of rows, (FIRST . LAST)."
  (goto-char (point-min))
  (while (re-search-forward "[^\n]" nil t)
    (let ((row (datasourced--row-at (point))))
      (if (cl-some (lambda (span) (<= (car span) row (cdr span))) kept)
          (forward-line 1)
        (delete-region (line-beginning-position) (line-end-position))
        (datasourced--undraw (point))))))

(defun datasourced--undraw (position)
  "Have the empty line at POSITION drawn again as it is next displayed."
  (when (< position (point-max))
    (put-text-property position (1+ position) 'fontified nil)))

(defun datasourced--row-at (position)
  "The row (from 0) of the line of a counted list at POSITION.
Lines are counted from the last row found, not from the top: a row near
the millionth is no scan of a million lines each time."
  (save-excursion
    (goto-char position)
    (forward-line 0)
    (let* ((start (point))
           (mark datasourced--line-mark)
           (from (and mark (marker-position (car mark))))
           (row (cond
                 ((null from) (1- (line-number-at-pos start)))
                 ((>= start from) (+ (cdr mark) (count-lines from start)))
                 (t (- (cdr mark) (count-lines start from))))))
      (if mark
          (set-marker (car mark) start)
        (setq mark (cons (copy-marker start) nil)
              datasourced--line-mark mark))
      (setcdr mark row)
      row)))

(defun datasourced--forget-line-mark ()
  "Forget the line start rows were counted from (lines came or went)."
  (when datasourced--line-mark
    (set-marker (car datasourced--line-mark) nil)
    (setq datasourced--line-mark nil)))

(defun datasourced--forget-layout ()
  "The buffer is no longer laid out as a counted list: its lines go."
  (datasourced--forget-line-mark)
  (when datasourced--last-row
    (delete-overlay datasourced--last-row)
    (setq datasourced--last-row nil))
  (setq datasourced--lines nil))

(defun datasourced--row (index)
  "The row INDEX of a counted list: nil (unread), `pending' or its value."
  (gethash index datasourced--counted))

(defun datasourced--set-row (index value)
  "Make VALUE the row INDEX of a counted list (nil: unread)."
  (if value
      (puthash index value datasourced--counted)
    (remhash index datasourced--counted)))

(defun datasourced--row-empty-p (value)
  "Whether a counted list's row VALUE has an empty line (unread, unloaded)."
  (or (memq value '(nil pending)) (eq (datasourced--placeholder-kind value) 'unloaded)))

(defun datasourced--unloaded-string (row)
  "The text drawn for the unread or unloaded ROW (from 0)."
  (propertize (concat (make-string tabulated-list-padding ?\s) (datasourced--unloaded-text row))
              'face 'datasourced-unloaded))

(defun datasourced--draw-unloaded (start end)
  "Draw the empty lines of a counted list between START and END.
Run by `jit-lock' as those lines are about to be displayed, and for
them only: an unread or unloaded row's line is empty, and its newline
displays as `  … row N' in the face `datasourced-unloaded'.  A line
with a text displays its newline as it is."
  (when datasourced--lines
    (save-excursion
      (goto-char start)
      (forward-line 0)
      (let ((row (datasourced--row-at (point))))
        (while (and (< (point) end) (not (eobp)))
          (let ((newline (line-end-position)))
            (if (and (= newline (point)) (< newline (point-max)))
                (put-text-property newline (1+ newline) 'display
                                   (concat (datasourced--unloaded-string row) "\n"))
              (remove-list-of-text-properties newline (min (1+ newline) (point-max)) '(display)))
            (goto-char (1+ newline))
            (setq row (1+ row))))
        `(jit-lock-bounds ,start . ,(max end (point)))))))

(defun datasourced--draw-last-row ()
  "Draw the last row of a counted list while its line is empty.
That line has no newline (end-of-buffer is on it): an overlay draws it."
  (let ((total datasourced--total))
    (if (and datasourced--lines (> total 0)
             (datasourced--row-empty-p (datasourced--row (1- total))))
        (let ((text (datasourced--unloaded-string (1- total))))
          ;; The cursor on the line is shown at its start, not after the text.
          (put-text-property 0 1 'cursor t text)
          (unless datasourced--last-row
            (setq datasourced--last-row (make-overlay (point-max) (point-max) nil t nil)))
          (move-overlay datasourced--last-row (point-max) (point-max))
          (overlay-put datasourced--last-row 'before-string text))
      (when datasourced--last-row
        (delete-overlay datasourced--last-row)
        (setq datasourced--last-row nil)))))

(defun datasourced--redraw-rows (indices)
  "Redraw the lines of the rows INDICES (ascending) of a counted list.
A row with a value has its text; an unread or unloaded row's line is
emptied, its text drawn as it is displayed."
  (let ((inhibit-read-only t) (columns (datasourced--columns)) (at 0))
    (save-excursion
      (goto-char (point-min))
      (dolist (i indices)
        ;; Forward from the row before: a page near row 999,900 is no scan per row.
        (forward-line (- i at))
        (setq at i)
        (let ((start (point)) (value (datasourced--row i)))
          ;; The newline stays, so a point or window start on the next line stays there.
          (if (datasourced--row-empty-p value)
              (unless (eolp)
                (delete-region start (line-end-position))
                (datasourced--undraw start))
            (delete-region start (line-end-position))
            (let ((kind (datasourced--placeholder-kind value)))
              (if kind
                  (datasourced--print-entry (list kind 0 i) (vector (datasourced--placeholder-text value kind)))
                (tabulated-list-print-entry
                 (list 'row 0 i)
                 (apply #'vector (mapcar (lambda (c) (datasourced--cell value (car c))) columns)))))
            (delete-char -1)
            (unless (eobp)
              ;; The newline, drawn as an empty row's before, shows as a newline again.
              (remove-list-of-text-properties (point) (1+ (point)) '(display))))
          (goto-char start))))
    (when (memq (1- datasourced--total) indices)
      (datasourced--draw-last-row))))

(defun datasourced--apply-counted (changes values)
  "Apply a change set of rows updated in place to a counted list.
CHANGES is the change set and VALUES the didChange's values.  Only the
rows the windows show (`datasourced--shown-spans') take their values and
are drawn; the others are unread again (read when they show), their
lines emptied if they had a text, and a range of them ([section, item,
count]) is not gone through row by row.  Without values, the rows are
read again."
  (let* ((updated (append (plist-get changes :updated) nil))
         (given (let ((v (plist-get values :updated))) (if (listp v) (apply #'vector v) v)))
         (with-values (= (length given) (datasourced--rows-named (plist-get changes :updated))))
         (total datasourced--total)
         (spans (datasourced--shown-spans))
         (base 0)
         (indices nil))
    (dolist (path updated)
      (let* ((first (aref path 1))
             (count (if (< (length path) 3) 1 (aref path 2)))
             (end (min total (+ first count))))
        (dolist (span spans)
          (cl-loop for i from (max first (car span)) to (min (1- end) (cdr span))
                   do (datasourced--set-row i (and with-values (aref given (+ base (- i first)))))
                   (push i indices)))
        (dolist (i (datasourced--rows-read-between first end))
          (unless (cl-some (lambda (span) (<= (car span) i (cdr span))) spans)
            (datasourced--set-row i nil)
            (push i indices)))
        (setq base (+ base count))))
    (datasourced--redraw-rows (sort (delete-dups indices) #'<))))

(defun datasourced--rows-read-between (first end)
  "The rows of a counted list read (or being read) from FIRST to before END."
  (let ((rows nil))
    (if (<= (- end first) (hash-table-count datasourced--counted))
        (cl-loop for i from first below end
                 when (datasourced--row i) do (push i rows))
      (maphash (lambda (i _) (when (and (<= first i) (< i end)) (push i rows)))
               datasourced--counted))
    rows))

(defun datasourced--counted-index (&optional position)
  "The row of a counted list at POSITION (default: point), or nil."
  (let ((total datasourced--total))
    (and (> total 0)
         (min (1- total) (datasourced--row-at (or position (point)))))))

(defun datasourced--shown-spans ()
  "The rows of a counted list its windows show, and those around point.
A list of (FIRST . LAST) spans of rows; around point too, since a
command that moved it far is followed by a scroll."
  (let ((total datasourced--total) (spans nil))
    (when (> total 0)
      (dolist (window (get-buffer-window-list (current-buffer) nil t))
        (let ((height (max 1 (window-body-height window)))
              (first (datasourced--counted-index (window-start window)))
              (here (datasourced--counted-index (window-point window))))
          (push (cons first (min (1- total) (+ first height))) spans)
          (push (cons (max 0 (- here height)) (min (1- total) (+ here height))) spans))))
    spans))

(defun datasourced--read-shown ()
  "Read the unread rows of a counted list that its windows show, and around point."
  (when (and datasourced--counted datasourced--known (datasourced--running-p))
    (dolist (span (datasourced--shown-spans))
      (let ((i (car span)) (last (cdr span)))
        (while (<= i last)
          (if (datasourced--row i)
              (setq i (1+ i))
            (let ((start i))
              (while (and (<= i last) (null (datasourced--row i)))
                (datasourced--set-row i 'pending)
                (setq i (1+ i)))
              (datasourced--read-counted start (- i start)))))))))

(defun datasourced--read-counted (start count)
  "Read COUNT rows of a counted list from START (objectsInSection)."
  (let ((buffer (current-buffer)) (rows datasourced--counted) (total datasourced--total))
    (datasourced--request
     datasourced--daemon 'objectsInSection
     (list :source datasourced--source :section 0 :start start :count count)
     (lambda (result)
       (when (buffer-live-p buffer)
         (with-current-buffer buffer
           (when (eq rows datasourced--counted)
             (let ((fits (equal (plist-get result :revision) datasourced--revision))
                   (objects (plist-get result :objects))
                   (indices nil))
               ;; Read at another revision: a change came between; the next look reads them.
               (dotimes (k count)
                 (let ((i (+ start k)))
                   (when (and (< i total) (eq (datasourced--row i) 'pending))
                     (datasourced--set-row i (and fits (< k (length objects)) (aref objects k)))
                     (when fits (push i indices)))))
               (datasourced--redraw-rows (nreverse indices))
               (datasourced--schedule-display))))))
     (lambda (err)
       (when (buffer-live-p buffer)
         (with-current-buffer buffer
           (when (eq rows datasourced--counted)
             (dotimes (k count)
               (when (eq (datasourced--row (+ start k)) 'pending)
                 (datasourced--set-row (+ start k) nil))))
           (datasourced--say "%s: reading rows %d to %d failed: %s" datasourced--source
                             (1+ start) (+ start count) (datasourced--rpc-error-text err))))))))

(defun datasourced--unloaded-p (index)
  "Whether the row INDEX of a counted list is known to be unloaded."
  (eq (datasourced--placeholder-kind (datasourced--row index)) 'unloaded))

(defun datasourced--schedule-display ()
  "Show the row at point to the daemon once point rests on it, if unloaded.
Keys held down over unloaded rows ask once: the timer starts again with
each command, and fires `datasourced-display-delay' after the last.
The first and the last row ask at once: keys held there cannot take
point further (`M->' loads the last page without a pause)."
  (when (timerp datasourced--display-timer)
    (cancel-timer datasourced--display-timer))
  (setq datasourced--display-timer nil)
  (let ((i (and datasourced--counted (datasourced--counted-index))))
    ;; A row that loaded may be dropped again (the window): then it asks again.
    ;; (Not a row being read: `RET' on it asked already.)
    (when (and i (not (memq (datasourced--row i) '(nil pending))) (not (datasourced--unloaded-p i)))
      (setq datasourced--displayed nil))
    (when (and i (datasourced--unloaded-p i) (not (eql i datasourced--displayed)))
      (let ((buffer (current-buffer)))
        (setq datasourced--display-timer
              (run-at-time (if (memq i (list 0 (1- datasourced--total)))
                               0
                             datasourced-display-delay)
                           nil
                           (lambda ()
                             (when (buffer-live-p buffer)
                               (with-current-buffer buffer
                                 (setq datasourced--display-timer nil)
                                 (let ((here (and datasourced--counted (datasourced--counted-index))))
                                   (when (and here (datasourced--unloaded-p here))
                                     (datasourced--display-row here))))))))))))

(defun datasourced--display-row (index)
  "Tell the daemon the row INDEX is shown (willDisplay), to load its page.
A row far from the loaded ones loads its page alone (a jump)."
  (when (and datasourced--counted (datasourced--running-p))
    (setq datasourced--displayed index)
    (datasourced--request datasourced--daemon 'willDisplayObjectAtIndexPath
                          (list :source datasourced--source :indexPath (vector 0 index)))))

(defun datasourced--count-loaded ()
  "Read the number of objects a counted list has, for its status."
  (let ((buffer (current-buffer)))
    (datasourced--request
     datasourced--daemon 'describeSource (list :source datasourced--source)
     (lambda (description)
       (when (buffer-live-p buffer)
         (with-current-buffer buffer
           (when datasourced--counted
             (setq datasourced--counted-loaded (or (plist-get description :numberOfObjects) 0)))
           (datasourced--update-loaded-status)))))))

;;;; Paging

(defun datasourced--last-loading-row ()
  "The (S . I) index path of the list's last row when it is a loading row."
  (let* ((section (car (last datasourced--sections)))
         (s (1- (length datasourced--sections))))
    (when (and section (cdr section)
               (eq (datasourced--placeholder-kind (car (last (cdr section)))) 'loading))
      (cons s (1- (length (cdr section)))))))

(defun datasourced--maybe-page (window &optional scrolled)
  "Ask for the next page when the end of the list is in WINDOW.
That is point within `datasourced-page-ahead' lines of a trailing
loading row, or, when SCROLLED, that row inside the window."
  (let ((path (and datasourced--known datasourced--daemon (not datasourced--in-flight)
                   (datasourced--last-loading-row))))
    (when (and path (not (eql datasourced--paged-at datasourced--version))
               (or (<= (1- (count-lines (line-beginning-position) (point-max)))
                       datasourced-page-ahead)
                   (and scrolled (window-live-p window)
                        (>= (or (window-end window t) 0)
                            (save-excursion (goto-char (point-max)) (forward-line -1) (point))))))
      (setq datasourced--paged-at datasourced--version)
      (datasourced--request datasourced--daemon 'willDisplayObjectAtIndexPath
                            (list :source datasourced--source
                                  :indexPath (vector (car path) (cdr path)))))))

(defun datasourced--after-command ()
  "After a command in a list: the next page when point is near its end.
Not after a refresh, whose list shrinks under point."
  (cond
   (datasourced--counted
    (datasourced--read-shown)
    (datasourced--schedule-display))
   ((not (memq this-command '(datasourced-refresh revert-buffer)))
    (datasourced--maybe-page (selected-window)))))

(defun datasourced--after-scroll (window _start)
  "Ask for the next page after WINDOW scrolled, if its last row is in view."
  (when (buffer-live-p (window-buffer window))
    (with-current-buffer (window-buffer window)
      (when (derived-mode-p 'datasourced-list-mode)
        (if datasourced--counted
            (datasourced--read-shown)
          (datasourced--maybe-page window t))))))

;;;; Opening a list

(defun datasourced--spec-file-p (file)
  "Whether FILE can be a spec (JSON or TOML), or is a directory to go through."
  (or (file-directory-p file) (string-match-p "\\.\\(?:json\\|toml\\)\\'" file)))

;;;###autoload
(defun datasourced-open (file)
  "Open the list of the spec FILE (JSON, or TOML) in a list buffer.
A spec names the sources to create and the one to show; see the
README.  ${NAME} in it takes its value from `datasourced-variables'."
  (interactive
   (list (read-file-name "Spec: " nil nil t nil #'datasourced--spec-file-p)))
  (let* ((spec (datasourced-read-spec file))
         (buffer (get-buffer-create (format "*datasourced: %s*" (plist-get spec :title)))))
    (with-current-buffer buffer
      (when (and (derived-mode-p 'datasourced-list-mode) datasourced--daemon)
        ;; Opening it again (say, after fixing the spec) starts it anew.
        (datasourced--release))
      (datasourced-list-mode)
      (setq datasourced--spec spec
            datasourced--source (plist-get spec :show)))
    (pop-to-buffer-same-window buffer)
    (with-current-buffer buffer (datasourced--start-list))
    buffer))

(defun datasourced--show-message (text &optional short)
  "Show TEXT in the list instead of its rows.
The echo area shows SHORT, or TEXT."
  (setq datasourced--message text)
  (datasourced--render)
  (datasourced--say "%s" (or short text)))

(defun datasourced--start-list ()
  "Start (or restart) the list: its daemon, its sources, its rows, its load."
  (when datasourced--filter
    ;; A new daemon has no filtered source: the list shows its own source again.
    (setq datasourced--created (delete (plist-get datasourced--filter :name) datasourced--created)
          datasourced--source (plist-get datasourced--filter :base)
          datasourced--filter nil))
  (let ((daemon (datasourced--daemon-for datasourced-command)))
    (setq datasourced--known nil datasourced--revision nil datasourced--sections nil
          datasourced--loaded nil datasourced--in-flight nil
          datasourced--setup-failed nil datasourced--stale nil
          datasourced--message nil datasourced--under (list datasourced--source)
          datasourced--reading nil datasourced--read-again nil
          datasourced--counted nil datasourced--displayed nil)
    (if (stringp daemon)
        (progn
          (setq datasourced--daemon nil datasourced--setup-failed t)
          (datasourced--set-status "error: the daemon did not start")
          (datasourced--show-message
           daemon
           (if (datasourced--executable datasourced-command)
               daemon
             (format "the daemon %s was not found: set `datasourced-command' (see the list)"
                     (car datasourced-command))))
          (run-hook-with-args 'datasourced-failed-hook (list :kind "daemon" :message daemon)))
      (setq datasourced--daemon daemon)
      (cl-pushnew (current-buffer) (datasourced--daemon-lists daemon))
      (datasourced--set-status "starting")
      (datasourced--render)
      (let ((buffer (current-buffer)))
        (datasourced--request
         daemon 'listSources nil
         (lambda (existing)
           (when (buffer-live-p buffer)
             (with-current-buffer buffer
               (datasourced--create-missing
                (mapcar (lambda (s) (plist-get s :name)) existing))))))))))

(defun datasourced--create-missing (existing)
  "Create the spec's sources that are not among EXISTING, then load the list."
  (let* ((buffer (current-buffer))
         (daemon datasourced--daemon)
         (created (datasourced--daemon-created daemon))
         (missing nil))
    (dolist (params (plist-get datasourced--spec :sources))
      (let ((name (gethash "name" params)))
        (if (not (member name existing))
            (push params missing)
          (when (and (gethash name created)
                     (not (equal (gethash name created) (datasourced--encode params))))
            (datasourced--say "%s: the daemon already has this source, made with other \
settings; the list shows that one (close its lists to change it)" name)))))
    (setq missing (nreverse missing))
    (cl-labels
        ((next ()
           (if (null missing)
               (datasourced--read-and-load)
             (let* ((params (pop missing)) (name (gethash "name" params)))
               (datasourced--request
                daemon 'createSource params
                (lambda (_description)
                  (puthash name (datasourced--encode params) created)
                  (when (buffer-live-p buffer)
                    (with-current-buffer buffer
                      (setq datasourced--created (append datasourced--created (list name)))
                      (next))))
                (lambda (err)
                  (when (buffer-live-p buffer)
                    (with-current-buffer buffer
                      (let ((text (format "cannot create the source %s: %s"
                                          name (datasourced--rpc-error-text err))))
                        (setq datasourced--setup-failed t)
                        (datasourced--set-status (concat "error: " text))
                        (datasourced--show-message text)
                        (run-hook-with-args 'datasourced-failed-hook
                                            (list :kind "createSource" :message text)))))))))))
      (next))))

(defun datasourced--walk (daemon name done)
  "Describe NAME and every source under it on DAEMON.
DONE gets the descriptions, as (NAME . DESCRIPTION)."
  (let ((seen nil) (descriptions nil) (outstanding 0))
    (cl-labels
        ((visit (source)
           (unless (member source seen)
             (push source seen)
             (setq outstanding (1+ outstanding))
             (datasourced--request
              daemon 'describeSource (list :source source)
              (lambda (description)
                (push (cons source description) descriptions)
                (dolist (child (append (or (plist-get description :children)
                                           (plist-get description :sources)
                                           (and (plist-get description :source)
                                                (vector (plist-get description :source))))
                                       nil))
                  (visit child))
                (setq outstanding (1- outstanding))
                (when (zerop outstanding) (funcall done descriptions)))
              (lambda (_err)
                (setq outstanding (1- outstanding))
                (when (zerop outstanding) (funcall done descriptions)))))))
      (visit name))))

(defun datasourced--read-and-load ()
  "Read the rows, then load the sources under the list that need a load.
A remote or paginated source needs one unless its last load on this
daemon finished or is in flight: a list reopened after a failed or
cancelled load loads again, one reopened over loaded pages shows them."
  (let ((buffer (current-buffer)) (daemon datasourced--daemon) (source datasourced--source))
    (datasourced--read
     (lambda (description)
       (datasourced--walk
        daemon source
        (lambda (descriptions)
          (when (buffer-live-p buffer)
            (with-current-buffer buffer
              (datasourced--headers-below-filters descriptions)
              (datasourced--note-actions source descriptions)
              (setq datasourced--under (mapcar #'car descriptions)
                    datasourced--remote-sources
                    (sort (cl-loop for (name . d) in descriptions
                                   when (member (plist-get d :kind) '("remote" "paginated"))
                                   collect name)
                          #'string<))
              (let* ((outcomes (datasourced--daemon-outcomes daemon))
                     (remote (cl-remove-if-not
                              (lambda (d) (member (plist-get (cdr d) :kind) '("remote" "paginated")))
                              descriptions))
                     (unloaded (cl-loop for (name . d) in remote
                                        unless (or (eq (plist-get d :isFetching) t)
                                                   (eq (gethash name outcomes) 'finished))
                                        collect name)))
                (cond
                 ((null unloaded)
                  (if (eq (plist-get description :isFetching) t)
                      (progn (setq datasourced--in-flight t)
                             (datasourced--set-status "loading"))
                    (setq datasourced--loaded t)
                    (datasourced--update-loaded-status)))
                 ((= (length unloaded) (length remote))
                  (datasourced--request daemon 'fetchData (list :source source)))
                 (t (dolist (name unloaded)
                      (datasourced--request daemon 'fetchData (list :source name))))))))))))))

;;;; Filters and searches

(defun datasourced--row-positions ()
  "The start of each row's line, by its (SECTION . ITEM)."
  (let ((positions (make-hash-table :test #'equal)))
    (save-excursion
      (goto-char (point-min))
      (while (not (eobp))
        (let ((id (tabulated-list-get-id)))
          (when (eq (car-safe id) 'row)
            (puthash (cons (nth 1 id) (nth 2 id)) (point) positions)))
        (forward-line 1)))
    positions))

(defun datasourced--highlight-row (start object match)
  "Highlight the characters MATCH names in the line at START showing OBJECT.
MATCH is a match position: (:score :keyPath :positions)."
  (let ((value (datasourced--at-key-path object (or (plist-get match :keyPath) "")))
        (end (save-excursion (goto-char start) (line-end-position))))
    (when (and (stringp value) (not (string-empty-p value)))
      (save-excursion
        (goto-char start)
        ;; The string as the line shows it: whole, or its first characters when
        ;; a column's width cut it.
        (let ((shown (length value)) found)
          (while (and (> shown 0) (not found))
            (goto-char start)
            (if (search-forward (substring value 0 shown) end t)
                (setq found (match-beginning 0))
              (setq shown (1- shown))))
          (when found
            (dolist (position (append (plist-get match :positions) nil))
              (when (and (integerp position) (< position shown))
                (let ((overlay (make-overlay (+ found position) (+ found position 1))))
                  (overlay-put overlay 'face 'datasourced-match)
                  (overlay-put overlay 'datasourced-match t))))))))))

(defun datasourced--highlight-matches ()
  "Highlight each row's match positions while a query filters the list.
Read them with objectsInSection withMatches (protocol 1.4), once per
revision; an answer about another revision is dropped."
  (let ((filter datasourced--filter))
    (if (not (and filter (plist-get filter :ready)
                  (not (string-empty-p (plist-get filter :query)))
                  (equal datasourced--source (plist-get filter :name))))
        (progn (remove-overlays (point-min) (point-max) 'datasourced-match t)
               (setq datasourced--matches-read nil))
      (unless (or (not datasourced--known) (equal datasourced--matches-read datasourced--revision))
        (let* ((buffer (current-buffer)) (revision datasourced--revision)
               (total (length datasourced--sections))
               (state (list :answers 0 :found nil)))
          (setq datasourced--matches-read revision)
          (dotimes (s total)
            (datasourced--request
             datasourced--daemon 'objectsInSection
             (list :source datasourced--source :section s :withMatches t)
             (lambda (result)
               (plist-put state :found (cons (cons s result) (plist-get state :found)))
               (plist-put state :answers (1+ (plist-get state :answers)))
               (when (= (plist-get state :answers) total)
                 (datasourced--matches-read buffer revision (plist-get state :found))))
             (lambda (_err)
               (plist-put state :answers (1+ (plist-get state :answers)))))))))))

(defun datasourced--matches-read (buffer revision found)
  "Highlight in BUFFER the FOUND answers ((SECTION . RESULT) ...) of REVISION."
  (when (buffer-live-p buffer)
    (with-current-buffer buffer
      (when (equal datasourced--revision revision)
        (remove-overlays (point-min) (point-max) 'datasourced-match t)
        (let ((positions (datasourced--row-positions)))
          (pcase-dolist (`(,s . ,result) found)
            (when (equal (plist-get result :revision) revision)
              (cl-loop for match across (or (plist-get result :matches) [])
                       for object across (plist-get result :objects)
                       for i from 0
                       for start = (gethash (cons s i) positions)
                       when (and start (consp match))
                       do (datasourced--highlight-row start object match)))))))))

(defun datasourced--match-key-paths ()
  "The key paths `/' matches over.
They are the spec's search.keyPaths, else the columns' keys, else the
string members of the first object."
  (let ((search (plist-get datasourced--spec :search)))
    (or (and search (gethash "keyPaths" search) (append (gethash "keyPaths" search) nil))
        (delq nil (mapcar #'car (plist-get datasourced--spec :columns)))
        (cl-loop for section in datasourced--sections
                 thereis (cl-loop for value in (cdr section)
                                  when (and (datasourced--object-p value)
                                            (not (datasourced--placeholder-kind value)))
                                  return (sort (cl-loop for (key val) on value by #'cddr
                                                        when (stringp val)
                                                        collect (substring (symbol-name key) 1))
                                               #'string<)))
        (list (or datasourced--identity-key "id")))))

(defun datasourced--speaks-p (version)
  "Whether the list's daemon speaks protocol VERSION (\"1.10\") or later."
  (let ((spoken (and datasourced--daemon (datasourced--daemon-protocol-version datasourced--daemon))))
    (and (stringp spoken)
         (ignore-errors (version<= version spoken)))))

(defun datasourced--fill ()
  "The rows a filter should fill, as (:fill N), or nil.
N is the body height of the tallest window showing the list (of the
frame when none does), within 1...10000: a filter whose matches are on
later pages loads them until the window is full, point staying put.
Nil for a daemon older than protocol 1.10, which has no fill."
  (when (datasourced--speaks-p "1.10")
    (let ((windows (get-buffer-window-list (current-buffer) nil t)))
      (list :fill (max 1 (min 10000 (if windows
                                        (apply #'max (mapcar #'window-body-height windows))
                                      (frame-height))))))))

(defun datasourced--send-query ()
  "Send the filter's query (setFilter), once its filtered source exists.
The daemon answers in order, each answer after its change set."
  (let ((filter datasourced--filter))
    (when (and filter (plist-get filter :ready)
               (not (equal (plist-get filter :sent) (plist-get filter :query))))
      (let ((query (plist-get filter :query)) (buffer (current-buffer)))
        (setq datasourced--filter (plist-put filter :sent query))
        (datasourced--request
         datasourced--daemon 'setFilter
         (append (list :source (plist-get filter :name)
                       :match (if (string-empty-p query)
                                  nil
                                (list :query query :keyPaths (vconcat (plist-get filter :key-paths)))))
                 (datasourced--fill))
         (lambda (_description)
           (when (buffer-live-p buffer)
             (with-current-buffer buffer
               (setq datasourced--matches-read nil)
               (datasourced--highlight-matches)))))))))

(defun datasourced--ensure-filter ()
  "Make the list show a filtered source over its own (once per list).
It is named after the buffer, so two lists of one source filter apart,
and goes with the list."
  (unless datasourced--filter
    (let* ((buffer (current-buffer)) (daemon datasourced--daemon)
           (name (format "%s/filter#%s" datasourced--source (buffer-name))))
      (setq datasourced--filter (list :name name :base datasourced--source :query "" :sent ""
                                      :key-paths (datasourced--match-key-paths) :ready nil))
      (datasourced--request
       daemon 'createSource (append (list :name name :kind "filtered" :source datasourced--source)
                                    (datasourced--fill))
       (lambda (_description)
         (when (buffer-live-p buffer)
           (with-current-buffer buffer
             (when (and datasourced--filter (eq datasourced--daemon daemon))
               (setq datasourced--filter (plist-put (plist-put datasourced--filter :ready t)
                                                    ;; Its child's load in flight ends the list's.
                                                    :base-loading datasourced--in-flight)
                     datasourced--source name
                     datasourced--created (append datasourced--created (list name))
                     datasourced--under (cons name datasourced--under)
                     datasourced--known nil)
               (datasourced--read (lambda (_) (datasourced--send-query)))))))
       (lambda (err)
         (when (buffer-live-p buffer)
           (with-current-buffer buffer
             (setq datasourced--filter nil)
             (datasourced--say "%s: the daemon refused the filter: %s"
                               datasourced--source (datasourced--rpc-error-text err)))))))))

(defun datasourced--refuse-counted-filter ()
  "A `user-error' when the list is counted: its filter would be read whole.
A filtered source over a counted one has every row (a million, maybe),
and this client reads only a counted paginated source lazily."
  (when datasourced--counted
    (user-error "%s: filtering a counted list of %d rows is not supported here \(its filtered rows would be read whole); use a search (s) or a spec with a filter"
                datasourced--source datasourced--total)))

;;;###autoload
(defun datasourced-set-filter (query)
  "Filter the list by QUERY, a fuzzy match over its shown key paths.
The rows are ranked best first; \"\" shows every row again."
  (interactive (list (read-string "Filter: ")))
  (datasourced--list-buffer)
  (unless (datasourced--running-p)
    (user-error "%s: the daemon is not running" datasourced--source))
  (datasourced--refuse-counted-filter)
  (when (or datasourced--filter (not (string-empty-p query)))
    (datasourced--ensure-filter)
    (setq datasourced--filter (plist-put datasourced--filter :query query))
    (datasourced--send-query)))

(defvar datasourced--prompt-map
  (let ((map (make-sparse-keymap)))
    (set-keymap-parent map minibuffer-local-map)
    (define-key map [escape] #'abort-recursive-edit)
    map)
  "The minibuffer keys of the live prompts.
<escape> (a terminal's ESC stays a prefix) and \[keyboard-quit] cancel.")

(defun datasourced--live-read (prompt initial on-change)
  "Read a string with PROMPT, starting from INITIAL.
ON-CHANGE is called in the list's buffer with the text after each
command that changed it.  Return the text, or nil when cancelled."
  (let ((list-buffer (current-buffer)) (last initial))
    (condition-case nil
        (minibuffer-with-setup-hook
            (lambda ()
              (add-hook 'post-command-hook
                        (lambda ()
                          (let ((text (minibuffer-contents-no-properties)))
                            (unless (equal text last)
                              (setq last text)
                              (when (buffer-live-p list-buffer)
                                (with-current-buffer list-buffer
                                  (datasourced--guarded "the prompt" on-change text))))))
                        nil t))
          (read-from-minibuffer prompt initial datasourced--prompt-map))
      (quit nil))))

;;;###autoload
(defun datasourced-filter ()
  "Filter the rows as you type: each change of the prompt is a setFilter.
\<datasourced--prompt-map>RET keeps the filter; \[abort-recursive-edit] or
\[keyboard-quit] shows every row again."
  (interactive)
  (datasourced--list-buffer)
  (unless (datasourced--running-p)
    (user-error "%s: the daemon is not running" datasourced--source))
  (datasourced--refuse-counted-filter)
  (let ((text (datasourced--live-read "Filter: " (or (plist-get datasourced--filter :query) "")
                                      #'datasourced-set-filter)))
    (datasourced-set-filter (or text ""))))

(defun datasourced--search-target ()
  "The source a search of the list is sent to.
It is the spec's search.source, else the list's only remote or paginated
source; a `user-error' says why when there is none."
  (let ((search (plist-get datasourced--spec :search)))
    (unless (and search (or (gethash "parameter" search) (gethash "variable" search)))
      (user-error "%s: the list spec names no search parameter (add \"search\": {\"parameter\": \"q\"}, or {\"variable\": \"search\"} for a GraphQL source)"
                  datasourced--source))
    (or (gethash "source" search)
        (if (= (length datasourced--remote-sources) 1)
            (car datasourced--remote-sources)
          (user-error "%s: %s remote sources; name the one to search in the spec's search.source"
                      datasourced--source (if datasourced--remote-sources "several" "no"))))))

(defun datasourced--send-search (text)
  "Set the search parameter of the list's remote source to TEXT (updateSource).
Its other query parameters are kept; \"\" removes the parameter.  When the
spec names a search variable instead, that variable of the source's
GraphQL query is set, its other variables kept."
  (let* ((target (datasourced--search-target))
         (search (plist-get datasourced--spec :search))
         (variable (gethash "variable" search))
         (parameter (or variable (gethash "parameter" search)))
         (debounce (gethash "debounceMilliseconds" search))
         (buffer (current-buffer)) (daemon datasourced--daemon))
    (setq datasourced--searched text)
    (datasourced--request
     daemon 'describeSource (list :source target)
     (lambda (description)
       (when (and (buffer-live-p buffer)
                  (equal (buffer-local-value 'datasourced--searched buffer) text))
         (let ((query (make-hash-table :test #'equal)))
           (cl-loop for (key value) on (if variable
                                            (plist-get (plist-get description :graphql) :variables)
                                          (plist-get description :queryParameters))
                    by #'cddr
                    do (puthash (substring (symbol-name key) 1) value query))
           (if (string-empty-p text) (remhash parameter query) (puthash parameter text query))
           (datasourced--request
            daemon 'updateSource
            (append (list :source target)
                    (if variable (list :graphql (list :variables query)) (list :queryParameters query))
                    (and debounce (list :debounceMilliseconds debounce))))))))))

;;;###autoload
(defun datasourced-search (text &optional typed)
  "Search the server: the list's remote source asks for TEXT.
Its query parameter named by the spec's search.parameter becomes TEXT
\(updateSource); the rows stay until the new query's rows replace them.
Interactively, the search goes out as you type (the spec's
debounceMilliseconds merges a burst of keys into one request);
cancelling goes back to the search shown before.  TYPED says the
prompt sent each change already: TEXT goes out only if it is not the
last one sent."
  (interactive
   (progn
     (datasourced--list-buffer)
     (datasourced--search-target)
     (let ((before datasourced--searched))
       (list (or (datasourced--live-read "Search: " before #'datasourced--send-search) before) t))))
  (datasourced--list-buffer)
  (unless (datasourced--running-p)
    (user-error "%s: the daemon is not running" datasourced--source))
  (unless (and typed (equal text datasourced--searched))
    (datasourced--send-search text)))

(defun datasourced--headers-below-filters (descriptions)
  "Give the list's filtered source the header rows of the source below it.
They are there when the source under its filters is sectioned or multi;
DESCRIPTIONS are (NAME . DESCRIPTION)."
  (let ((below (cdr (assoc datasourced--source descriptions))) (seen nil))
    (when (and (equal (plist-get below :kind) "filtered") (not datasourced--filter))
      (while (and below (equal (plist-get below :kind) "filtered")
                  (not (member (plist-get below :source) seen)))
        (push (plist-get below :source) seen)
        (setq below (cdr (assoc (plist-get below :source) descriptions))))
      (let ((sectioned (and below (member (plist-get below :kind) '("sectioned" "multi")) t)))
        (unless (eq sectioned (and datasourced--sectioned t))
          (setq datasourced--sectioned sectioned)
          (datasourced--render))))))

;;;; Actions

(defun datasourced--note-actions (shown descriptions)
  "Note the actions of the sources under the list.
SHOWN is the source the list shows, DESCRIPTIONS its sources' as
\(NAME . DESCRIPTION).  The first to declare actions, from SHOWN down,
is the one acted on: the spec's source with actions, even below a
derived source."
  (let ((ordered (cons (assoc shown descriptions) (reverse descriptions))))
    (cl-loop for (name . description) in (delq nil ordered)
             when (datasourced--object-p (plist-get description :actions))
             return (progn
                      (setq datasourced--action-source name
                            datasourced--actions (plist-get description :actions)
                            datasourced--action-key (plist-get description :identityKey))
                      ;; Mutations made before the list (re)opened, not settled yet:
                      ;; their rows are marked too.
                      (let ((pending (append (plist-get description :pendingMutations) nil)))
                        (dolist (m pending)
                          (let ((mutation (plist-get m :mutation)))
                            (when (and (stringp mutation) (not (assoc mutation datasourced--mutations)))
                              (push (list mutation (plist-get m :action)
                                          (or (plist-get m :identity) (concat "pending:" mutation)))
                                    datasourced--mutations))))
                        (when pending (datasourced--render)))))))

(defun datasourced--action-names ()
  "The names of the actions of this list, sorted."
  (sort (cl-loop for (key _) on datasourced--actions by #'cddr
                 collect (substring (symbol-name key) 1))
        #'string<))

(defun datasourced--identity (value)
  "The identity of the row VALUE (its `datasourced--action-key'), or nil."
  (and (stringp datasourced--action-key) (datasourced--object-p value)
       (not (datasourced--placeholder-kind value))
       (datasourced--get value datasourced--action-key)))

(defun datasourced--pending-p (value)
  "Whether the row VALUE has an action the server has not answered yet."
  (let ((identity (and datasourced--mutations (datasourced--identity value))))
    (and identity (cl-some (lambda (m) (equal (nth 2 m) identity)) datasourced--mutations))))

(defun datasourced--row-at-point ()
  "The value of the row at point, or nil (a header, a placeholder)."
  (let ((id (tabulated-list-get-id)))
    (when (and (not datasourced--counted) (eq (car id) 'row))
      (nth (nth 2 id) (cdr (nth (nth 1 id) datasourced--sections))))))

(defun datasourced-parse-value (text type)
  "TEXT read as a value of the declared TYPE.
TYPE is \"string\", \"integer\", \"number\", \"boolean\", \"object\"
or \"array\".  Returns (VALUE), or a string saying what TEXT must be."
  (let ((trimmed (string-trim text)))
    (pcase type
      ("integer" (if (string-match-p "\\`[-+]?[0-9]+\\'" trimmed)
                     (list (string-to-number trimmed))
                   "an integer"))
      ("number" (if (string-match-p "\\`[-+]?\\(?:[0-9]+\\.?[0-9]*\\|\\.[0-9]+\\)\\(?:[eE][-+]?[0-9]+\\)?\\'" trimmed)
                    (list (string-to-number trimmed))
                  "a number"))
      ("boolean" (cond ((member (downcase trimmed) '("true" "yes" "y" "1")) (list t))
                       ((member (downcase trimmed) '("false" "no" "n" "0")) (list :json-false))
                       (t "true or false")))
      ((or "object" "array")
       (let ((decoded (ignore-errors
                        (json-parse-string trimmed :object-type 'hash-table :array-type 'array
                                           :null-object nil :false-object :json-false))))
         (if (if (equal type "object") (hash-table-p decoded) (vectorp decoded))
             (list decoded)
           (if (equal type "object") "a JSON object" "a JSON array"))))
      (_ (list text)))))

(defun datasourced--read-values (action declared row)
  "Ask for the values ACTION declares in DECLARED, and return them.
DECLARED is the action's values as describeSource gives them; the
result is a hash table.  ROW is the row acted on: a prompt shows its
current value.  Required values come first; a required string may be
empty, another required value must be given; an optional one left
empty is left out."
  (let ((values (make-hash-table :test #'equal))
        (names (cl-loop for (key _) on declared by #'cddr
                        collect (substring (symbol-name key) 1))))
    (setq names (sort names (lambda (a b)
                              (let ((ra (eq (plist-get (datasourced--get declared a) :required) t))
                                    (rb (eq (plist-get (datasourced--get declared b) :required) t)))
                                (if (eq ra rb) (string< a b) ra)))))
    (dolist (name names values)
      (let* ((spec (datasourced--get declared name))
             (type (or (plist-get spec :type) "string"))
             (required (eq (plist-get spec :required) t))
             (current (and row (datasourced--get row name)))
             (text (read-string (format "%s %s (%s%s): " action name type (if required "" ", optional"))
                                (and current (datasourced--scalar-text current)))))
        (cond
         ((and (string-empty-p text) (not (and required (equal type "string"))))
          (when required
            (user-error "%s not sent: %s is required (%s)" action name
                        (if (equal type "integer") "an integer" (concat "a " type)))))
         (t (let ((parsed (datasourced-parse-value text type)))
              (if (stringp parsed)
                  (user-error "%s not sent: %s must be %s (got %S)" action name parsed text)
                (puthash name (car parsed) values)))))))))

;;;###autoload
(defun datasourced-action (action)
  "Call the source's ACTION on the row at point.
ACTION is one of the actions the list's source declares (\"actions\" in
the spec's source), chosen with completion.  Each value it declares is
asked for, then performAction goes to the source that declares it, with
the row's identity.  The change shows at once; the row stays dim, in
the face `datasourced-pending', until the server answers, and a
rollback says the server's words."
  (interactive
   (progn
     (datasourced--list-buffer)
     (unless datasourced--actions
       (user-error "%s: its sources declare no actions" datasourced--source))
     (list (completing-read "Action: " (datasourced--action-names) nil t))))
  (datasourced--list-buffer)
  (unless (datasourced--running-p)
    (user-error "%s: the daemon is not running" datasourced--source))
  (unless (member action (datasourced--action-names))
    (user-error "%s: no action %S (%s)" (or datasourced--action-source datasourced--source) action
                (string-join (datasourced--action-names) ", ")))
  (let* ((declared (datasourced--get datasourced--actions action))
         (optimistic (or (plist-get declared :optimistic) "none"))
         (row (datasourced--row-at-point))
         (identity (datasourced--identity row))
         (params (list :source datasourced--action-source :action action)))
    (if identity
        (setq params (append params (list :identity identity)))
      (when (member optimistic '("update" "remove"))
        (user-error "%s needs a row: move point to one" action)))
    (let* ((wanted (plist-get declared :values))
           (values (and (datasourced--object-p wanted) (datasourced--read-values action wanted row)))
           (buffer (current-buffer)))
      (when values
        (setq params (append params (list :values values))))
      (datasourced--request
       datasourced--daemon 'performAction params
       (lambda (answer)
         (let ((mutation (plist-get answer :mutation)))
           (when (and (stringp mutation) (buffer-live-p buffer))
             (with-current-buffer buffer
               (let ((marked (if (equal optimistic "insert")
                                 (or (and values (gethash datasourced--action-key values))
                                     (concat "pending:" mutation))
                               identity)))
                 (when marked
                   ;; The optimistic change's didChange came before this answer:
                   ;; the row is shown, and now marked.
                   (push (list mutation action marked) datasourced--mutations)
                   (datasourced--render)))))))
       (lambda (err)
         (datasourced--say "%s: %s failed: %s" (plist-get params :source) action
                           (datasourced--rpc-error-text err)))))))

(defun datasourced--on-settle (daemon params)
  "A dataSource/didSettleMutation notification (PARAMS) from DAEMON.
A committed or rolled back mutation leaves its row's mark; a rollback
is said with the server's words; a queued one stays marked."
  (let ((source (plist-get params :source))
        (mutation (plist-get params :mutation))
        (status (plist-get params :status))
        (failure (plist-get params :error)))
    (when (member status '("committed" "rolledBack"))
      (dolist (buffer (datasourced--daemon-lists daemon))
        (when (buffer-live-p buffer)
          (with-current-buffer buffer
            (when (and (equal source datasourced--action-source) (assoc mutation datasourced--mutations))
              (setq datasourced--mutations (assoc-delete-all mutation datasourced--mutations))
              (datasourced--render))))))
    (let ((words (or (let ((said (plist-get failure :serverMessage)))
                       (and (stringp said) (not (string-empty-p said)) said))
                     (plist-get failure :message)
                     (plist-get failure :kind)
                     "unknown error")))
      (pcase status
        ;; A cancel is what the person asked for (`datasourced-cancel-action'):
        ;; said plainly, without the daemon's words.
        ((and "rolledBack" (guard (equal (plist-get failure :kind) "cancelled")))
         (datasourced--say "%s: %s cancelled, its change undone" source (plist-get params :action)))
        ("rolledBack" (datasourced--say "%s: %s rolled back: %s" source (plist-get params :action) words))
        ("queued" (datasourced--say "%s: %s not sent yet, to be sent again: %s"
                                    source (plist-get params :action) words))))))

(defun datasourced--mutation-number (entry)
  "The place in the order made of ENTRY, a (MUTATION ACTION IDENTITY).
The daemon numbers its mutations in order: m10 comes after m9."
  (if (string-match "\\([0-9]+\\)\\'" (car entry))
      (string-to-number (match-string 1 (car entry)))
    0))

;;;###autoload
(defun datasourced-cancel-action ()
  "Cancel the actions of the row at point the server has not taken yet.
Each action of the row not settled (queued to be sent again, or waiting
behind another) is rolled back with cancelMutation: the row shows what
it showed before, and the echo area says so.  An action on its way to
the server cannot be cancelled: its answer settles it.  With no pending
action on the row, nothing is sent."
  (interactive)
  (datasourced--list-buffer)
  (unless (datasourced--running-p)
    (user-error "%s: the daemon is not running" datasourced--source))
  (let* ((row (datasourced--row-at-point))
         (identity (datasourced--identity row))
         (pending (and identity
                       (cl-remove-if-not (lambda (m) (equal (nth 2 m) identity)) datasourced--mutations)))
         (source datasourced--action-source))
    (unless identity
      (user-error "%s: move point to a row with a pending action to cancel it" datasourced--source))
    (unless pending
      (user-error "%s: no pending action on this row: nothing to cancel" datasourced--source))
    ;; The newest first: a source sends its mutations one at a time, so cancelling
    ;; the oldest first would send the next on its way, where it cannot be cancelled.
    (dolist (m (sort (copy-sequence pending)
                     (lambda (a b) (> (datasourced--mutation-number a) (datasourced--mutation-number b)))))
      (let ((action (nth 1 m)))
        (datasourced--request
         datasourced--daemon 'cancelMutation (list :source source :mutation (car m))
         #'ignore
         (lambda (err)
           (let ((why (datasourced--rpc-error-text err)))
             (datasourced--say "%s: %s cannot be cancelled: %s" source action
                               (if (string-match-p "in flight" why)
                                   "it is on its way to the server, whose answer settles it"
                                 why)))))))))

;;;; Commands

(defun datasourced--list-buffer ()
  "The current list, or an error saying this is not one."
  (unless (derived-mode-p 'datasourced-list-mode)
    (user-error "This buffer is not a datasourced list"))
  (current-buffer))

(defun datasourced--running-p ()
  "Whether this list's daemon is running and its sources were made."
  (and datasourced--daemon (not datasourced--setup-failed)
       (not (datasourced--daemon-exited datasourced--daemon))
       (not (datasourced--daemon-stopping datasourced--daemon))))

;;;###autoload
(defun datasourced-refresh ()
  "Load the list again (a paginated source from page one).
Start the daemon again if it exited or did not start."
  (interactive)
  (datasourced--list-buffer)
  (if (not (datasourced--running-p))
      (datasourced--start-list)
    (datasourced--forget-declined datasourced--daemon)
    (datasourced--request datasourced--daemon 'fetchData (list :source datasourced--source))))

;;;###autoload
(defun datasourced-cancel ()
  "Cancel the load in flight."
  (interactive)
  (datasourced--list-buffer)
  (if (not (datasourced--running-p))
      (datasourced--say "%s: the daemon is not running" datasourced--source)
    (let ((source datasourced--source))
      (datasourced--request datasourced--daemon 'cancelFetch (list :source source)
                            (lambda (result)
                              (unless (eq (plist-get result :cancelled) t)
                                (datasourced--say "%s is not loading: nothing to cancel" source)))))))

;;;###autoload
(defun datasourced-retry ()
  "Ask again for a failed page, keeping the rows; else load the list again."
  (interactive)
  (datasourced--list-buffer)
  (if (not (datasourced--running-p))
      (datasourced--start-list)
    (datasourced--forget-declined datasourced--daemon)
    (let ((buffer (current-buffer)) (daemon datasourced--daemon)
          (failed (or (plist-get datasourced-last-error :source) datasourced--source)))
      (datasourced--request
       daemon 'describeSource (list :source failed)
       (lambda (d)
         (if (and (equal (plist-get d :kind) "paginated") (eq (plist-get d :hasMorePages) t)
                  (> (or (plist-get d :numberOfObjects) 0) 0))
             (datasourced--request daemon 'fetchNextPage (list :source failed))
           (when (buffer-live-p buffer)
             (with-current-buffer buffer (datasourced-refresh)))))))))

;;;###autoload
(defun datasourced-select ()
  "Show the object of the row at point; retry on an error row."
  (interactive)
  (datasourced--list-buffer)
  (let* ((id (if datasourced--counted
                 (let* ((i (datasourced--counted-index))
                        (value (and i (datasourced--row i))))
                   (if (or (memq value '(nil pending))
                           (eq (datasourced--placeholder-kind value) 'unloaded))
                       (list 'unloaded 0 i)
                     (list 'row 0 i)))
               (tabulated-list-get-id))))
    (pcase (car id)
      ('unloaded (datasourced--display-row (nth 2 id)))
      ((or 'error 'failed) (datasourced-retry))
      ('loading (datasourced--maybe-page (selected-window) t))
      ('row
       (let ((value (if datasourced--counted
                        (datasourced--row (nth 2 id))
                      (nth (nth 2 id) (cdr (nth (nth 1 id) datasourced--sections))))))
         (with-current-buffer (get-buffer-create "*datasourced object*")
           (let ((inhibit-read-only t))
             (erase-buffer)
             (insert (datasourced--encode value))
             (when (fboundp 'json-pretty-print-buffer) (json-pretty-print-buffer))
             (goto-char (point-min))
             (when (fboundp 'js-json-mode) (funcall 'js-json-mode))
             (setq buffer-read-only t))
           (display-buffer (current-buffer))))))))

(defun datasourced--release ()
  "Let the list's daemon go: the sources it created, then the daemon if last."
  (let ((daemon datasourced--daemon) (buffer (current-buffer)))
    (when daemon
      (setq datasourced--daemon nil)
      (setf (datasourced--daemon-lists daemon) (delq buffer (datasourced--daemon-lists daemon)))
      (let ((others (cl-remove-if-not #'buffer-live-p (datasourced--daemon-lists daemon)))
            (in-use nil))
        (dolist (other others)
          (setq in-use (append (buffer-local-value 'datasourced--under other) in-use)))
        (if (null others)
            (datasourced--stop daemon)
          ;; Parents before children: a child goes only once nothing uses it.
          (dolist (name (reverse datasourced--created))
            (unless (member name in-use)
              (remhash name (datasourced--daemon-created daemon))
              (remhash name (datasourced--daemon-outcomes daemon))
              (datasourced--request daemon 'destroySource (list :name name) nil #'ignore))))))))

;;;###autoload
(defun datasourced-quit ()
  "Close the list: the sources it created go, and its daemon if it was last."
  (interactive)
  (kill-buffer (datasourced--list-buffer)))

;;;###autoload
(defun datasourced-events ()
  "Show the log of the current list's daemon.
It holds the messages exchanged too if `datasourced-events-buffer-size' says so."
  (interactive)
  (let ((daemon (or (and (derived-mode-p 'datasourced-list-mode) datasourced--daemon)
                    (cdar datasourced--daemons))))
    (unless daemon (user-error "No datasourced daemon is running"))
    (display-buffer (jsonrpc-events-buffer (datasourced--daemon-connection daemon)))))

;;;###autoload
(defun datasourced-sources ()
  "List the open lists, their sources and their daemons."
  (interactive)
  (let ((lines nil))
    (dolist (buffer (buffer-list))
      (with-current-buffer buffer
        (when (derived-mode-p 'datasourced-list-mode)
          (push (format "%s\n  shows %s, made from %s\n  created here: %s\n  status: %s\n  daemon: %s\n"
                        (buffer-name) datasourced--source
                        (string-join datasourced--under ", ")
                        (if datasourced--created (string-join datasourced--created ", ") "none")
                        datasourced-status
                        (if datasourced--daemon
                            (format "%s (pid %s)"
                                    (string-join (datasourced--daemon-command datasourced--daemon) " ")
                                    (process-id (jsonrpc--process (datasourced--daemon-connection datasourced--daemon))))
                          "none"))
                lines))))
    (with-current-buffer (get-buffer-create "*datasourced sources*")
      (let ((inhibit-read-only t))
        (erase-buffer)
        (insert (if lines (string-join (nreverse lines) "\n") "No datasourced list is open.\n"))
        (special-mode))
      (display-buffer (current-buffer))
      (current-buffer))))

;;;###autoload
(defun datasourced-health ()
  "Say whether the daemon is found and answers, its version, and a round trip."
  (interactive)
  (let* ((command datasourced-command)
         (executable (datasourced--executable command))
         (lines (list (format "Emacs %s, jsonrpc: %s, native JSON: %s"
                              emacs-version
                              (if (boundp 'jsonrpc-default-request-timeout) "built in" "?")
                              (if (fboundp 'json-serialize) "yes" "no"))
                      (format "datasourced-command: %S" command))))
    (if (not executable)
        (push (concat "ERROR " (datasourced--not-found-text command)) lines)
      (push (format "OK the daemon is %s" executable) lines)
      (let ((daemon (datasourced--daemon-for command)))
        (if (stringp daemon)
            (push (concat "ERROR " daemon) lines)
          (let ((info (datasourced--daemon-server-info daemon))
                (start (float-time)))
            (push (format "OK %s %s, protocol %s" (plist-get info :name) (plist-get info :version)
                          (datasourced--daemon-protocol-version daemon))
                  lines)
            (condition-case failure
                (progn
                  (jsonrpc-request (datasourced--daemon-connection daemon) 'ping (make-hash-table) :timeout 5)
                  (push (format "OK a round trip takes %.1f ms" (* 1000 (- (float-time) start))) lines))
              (jsonrpc-error (push (format "ERROR ping: %s" (cdr failure)) lines)))
            (unless (datasourced--daemon-lists daemon) (datasourced--stop daemon))))))
    (with-current-buffer (get-buffer-create "*datasourced health*")
      (let ((inhibit-read-only t))
        (erase-buffer)
        (insert (string-join (nreverse lines) "\n") "\n")
        (special-mode))
      (display-buffer (current-buffer))
      (current-buffer))))

(provide 'datasourced)
;;; datasourced.el ends here
