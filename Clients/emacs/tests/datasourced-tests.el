;;; datasourced-tests.el --- ERT tests of datasourced.el against the real daemon  -*- lexical-binding: t; -*-

;;; Commentary:

;; Run by tests/run.sh in `emacs --batch': the daemon is $DATASOURCED, the
;; HTTP API is Clients/fixtures.json served by `$DATASOURCED fixtures'
;; (started here, once).  Keys are typed with `execute-kbd-macro', so the
;; command loop runs them as a user's (post-command-hook included).  Every
;; wait polls a condition until a deadline; the deadline is for failure,
;; never a pause.  Each test closes its lists and waits for its daemons to
;; end, so the tests can run in any order.

;;; Code:

(require 'ert)
(require 'cl-lib)
(require 'datasourced)

(defconst dst-here (file-name-directory (or load-file-name buffer-file-name)))
(defconst dst-repo (expand-file-name "../../.." dst-here))
(defconst dst-daemon
  (or (getenv "DATASOURCED") (expand-file-name ".build/debug/datasourced" dst-repo)))
(defconst dst-timeout 10 "Seconds a condition may take to become true.")

(defvar dst-base-url nil "The fixture API's base URL, once it is started.")
(defvar dst-fixtures-process nil)

(defun dst-wait (predicate what &optional seconds)
  "Waits until PREDICATE holds; fails naming WHAT after the deadline."
  (let ((deadline (+ (float-time) (or seconds dst-timeout))))
    (while (and (not (funcall predicate)) (< (float-time) deadline))
      (accept-process-output nil 0.02))
    (unless (funcall predicate)
      (ert-fail (list (concat "timed out waiting for " what)
                      :status (and (derived-mode-p 'datasourced-list-mode) datasourced-status)
                      ;; Its start: a counted list's buffer has a million lines.
                      :buffer (buffer-substring (point-min) (min (point-max) (+ (point-min) 2000))))))))

(defun dst-fixtures ()
  "Starts the fixture API (once); returns its base URL."
  (unless dst-base-url
    (let ((output (get-buffer-create " *dst fixtures*")))
      (setq dst-fixtures-process
            (make-process :name "dst fixtures" :buffer output :noquery t :connection-type 'pipe
                          :command (list dst-daemon "fixtures"
                                         (expand-file-name "Clients/fixtures.json" dst-repo))))
      (dst-wait (lambda ()
                  (with-current-buffer output
                    (goto-char (point-min))
                    (when (re-search-forward "\"baseURL\": *\"\\([^\"]+\\)\"" nil t)
                      (setq dst-base-url (match-string 1)))))
                "the fixture API's base URL")))
  dst-base-url)

(defvar dst-graphql-url nil "The GraphQL API's base URL, once it is started.")
(defvar dst-search-url nil "The Elasticsearch-shaped search's base URL, once it is started.")

(defun dst-graphql ()
  "Starts the GraphQL API and the search (once); returns the GraphQL API's base URL.
They are Tests/Frameworks/graphqlapi.py and the Elasticsearch-shaped search of
Tests/Frameworks/postapis.py, both served by Clients/tests/graphql-server.py,
which prints their base URLs (baseURL, searchURL) as `datasourced fixtures' does."
  (unless dst-graphql-url
    (let ((output (get-buffer-create " *dst graphql*")))
      (make-process :name "dst graphql" :buffer output :noquery t :connection-type 'pipe
                    :command (list "python3" (expand-file-name "Clients/tests/graphql-server.py" dst-repo)))
      (dst-wait (lambda ()
                  (with-current-buffer output
                    (goto-char (point-min))
                    (when (re-search-forward "\"baseURL\": *\"\\([^\"]+\\)\"" nil t)
                      (setq dst-graphql-url (match-string 1))
                      ;; The same line: both servers listen once it is printed.
                      (goto-char (point-min))
                      (when (re-search-forward "\"searchURL\": *\"\\([^\"]+\\)\"" nil t)
                        (setq dst-search-url (match-string 1)))
                      dst-graphql-url)))
                "the GraphQL API's base URL (Tests/Frameworks/requirements.txt installs Strawberry)")))
  dst-graphql-url)

(defun dst-search ()
  "Starts the GraphQL API and the search (once); returns the search's base URL."
  (dst-graphql)
  (should dst-search-url)
  dst-search-url)

(defun dst-daemon-processes ()
  "The live daemon processes this Emacs started for lists."
  (cl-remove-if-not (lambda (p) (and (process-live-p p)
                                     (string-match-p "\\`datasourced [0-9]+\\'" (process-name p))))
                    (process-list)))

(defvar dst-messages nil "What was said in the echo area during the test.")
(defvar dst-requests nil "The methods of the requests sent during the test, latest first.")

(defun dst-record-message (fn format-string &rest args)
  "Records what `message' (FN) shows for FORMAT-STRING and ARGS."
  (when format-string
    (push (apply #'format-message format-string args) dst-messages))
  (apply fn format-string args))

(defun dst-record-request (daemon method &rest args)
  "Records METHOD, sent to DAEMON with ARGS."
  (ignore daemon args)
  (push method dst-requests))

(defmacro dst-with-lists (&rest body)
  "Runs BODY with the test daemon and API; then closes every list and waits
for every daemon to end."
  (declare (indent 0) (debug t))
  `(let ((datasourced-command (list dst-daemon))
         (datasourced-variables (list (cons "baseURL" (dst-fixtures))))
         (datasourced-page-ahead 0)
         (datasourced-loaded-hook nil)
         (datasourced-failed-hook nil)
         (dst-messages nil)
         (dst-requests nil))
     (advice-add 'message :around #'dst-record-message)
     (advice-add 'datasourced--request :before #'dst-record-request)
     (unwind-protect
         (progn ,@body)
       (advice-remove 'message #'dst-record-message)
       (advice-remove 'datasourced--request #'dst-record-request)
       (delete-other-windows)
       (dolist (buffer (buffer-list))
         (when (with-current-buffer buffer (derived-mode-p 'datasourced-list-mode))
           (kill-buffer buffer)))
       (dst-wait (lambda () (null (dst-daemon-processes))) "every daemon to end"))))

(defun dst-lines ()
  "The list's lines, without trailing spaces."
  (mapcar #'string-trim-right (split-string (buffer-string) "\n" t)))

(defun dst-spec (name)
  "The path of the test spec NAME."
  (expand-file-name (concat "specs/" name) dst-here))

(defun dst-temp-spec (json)
  "A spec file holding JSON (a string with %s for the base URL's variable)."
  (let ((file (make-temp-file "datasourced-spec" nil ".json")))
    (with-temp-file file (insert json))
    file))

(defun dst-window-lines (lines)
  "Makes the selected window LINES lines high (its body), another buffer
below it: a filter fills that many rows."
  (let ((window-min-height 1))
    (set-window-buffer (split-window nil (+ lines (- (window-total-height) (window-body-height))))
                       (get-buffer-create " *dst other*")))
  (should (= (window-body-height) lines)))

(defun dst-keys (keys)
  "Types KEYS in the current buffer as a user would."
  (execute-kbd-macro (kbd keys)))

(defun dst-status (expected)
  "Waits until the list's status is EXPECTED."
  (dst-wait (lambda () (equal datasourced-status expected)) (format "status %S" expected)))

(defun dst-ping ()
  "A round trip to the list's daemon: what was sent before has been served."
  (jsonrpc-request (datasourced--daemon-connection datasourced--daemon) 'ping (make-hash-table)))

(defconst dst-genres-page1
  '("science fiction" "1    Dune               1950" "4    Solaris            1959"
    "mystery" "2    Gaudy Night        1953"
    "poetry" "3    Ariel              1956"))

(defconst dst-all-by-genre
  '("science fiction" "1    Dune               1950" "4    Solaris            1959"
    "7    Kindred            1968" "10   Ubik               1977"
    "mystery" "2    Gaudy Night        1953" "5    The Big Sleep      1962" "8    Rebecca            1971"
    "poetry" "3    Ariel              1956" "6    Howl               1965" "9    Leaves of Grass    1974"))

(defun dst-trimmed-lines ()
  "The list's lines without their padding."
  (mapcar #'string-trim (dst-lines)))

;;;; Tests

(ert-deftest datasourced-books-open-and-page-to-the-end ()
  "The books spec: sections as header rows, a loading row, paging to the end."
  (dst-with-lists
    (let ((loaded 0) (buffer (datasourced-open (dst-spec "books.json"))))
      (with-current-buffer buffer
        (add-hook 'datasourced-loaded-hook (lambda () (cl-incf loaded)) nil t)
        (should (eq (current-buffer) (window-buffer (selected-window))))
        (should (equal (buffer-name) "*datasourced: Books by genre*"))
        (should (equal datasourced--source "byGenre"))
        (should (derived-mode-p 'tabulated-list-mode))
        (dst-status "loaded 4")
        (should (equal (dst-trimmed-lines) (append dst-genres-page1 '("⋯ loading…"))))
        (should (equal mode-line-process '(:eval (datasourced--mode-line-status))))
        (should (equal (datasourced--mode-line-status) " loaded 4"))
        ;; The header rows and the placeholder have their faces.
        (goto-char (point-min))
        (should (eq (get-text-property (1+ (point)) 'face) 'datasourced-section))
        (goto-char (point-max))
        (forward-line -1)
        (should (eq (get-text-property (+ 2 (point)) 'face) 'datasourced-placeholder))
        (should (equal (car (tabulated-list-get-id)) 'loading))
        (should (equal (aref tabulated-list-format 0) '("id" 4 nil)))
        (should (equal (aref tabulated-list-format 2) '("Year" 4 nil)))
        (should (equal (aref tabulated-list-format 1) '("Title" 18 nil)))
        (goto-char (point-min))
        (dst-keys "M->")
        (dst-status "loaded 8")
        (dst-keys "M->")
        (dst-status "loaded 10")
        (should (equal (dst-trimmed-lines) dst-all-by-genre))
        (should (equal loaded 3))
        ;; No more pages: moving to the end asks for none.
        (setq dst-requests nil)
        (dst-keys "M-< M->")
        (dst-ping)
        (should-not (memq 'willDisplayObjectAtIndexPath dst-requests))
        (should (equal (dst-trimmed-lines) dst-all-by-genre))))))

(ert-deftest datasourced-paging-on-scroll-and-near-the-end ()
  "A window scrolled to show the loading row loads the next page; point far
from the end does not; `datasourced-page-ahead' lines before it does."
  (dst-with-lists
    (let* ((spec (dst-temp-spec "{\"name\": \"books\", \"kind\": \"paginated\", \"identityKey\": \"id\",
  \"remoteConfiguration\": {\"baseURL\": \"${baseURL}\"}, \"apiPath\": \"/v1/books\",
  \"keyPath\": \"books\", \"pageSize\": 4, \"title\": \"Just books\", \"columns\": [\"id\", \"title\"]}"))
           (buffer (datasourced-open spec)))
      (with-current-buffer buffer
        (dst-status "loaded 4")
        (should (equal (dst-trimmed-lines)
                       '("1  Dune" "2  Gaudy Night" "3  Ariel" "4  Solaris" "⋯ loading…")))
        ;; Point on the first row, 4 lines from the loading row: a command there loads nothing.
        (goto-char (point-min))
        (setq dst-requests nil)
        (dst-keys "C-a")
        (dst-ping)
        (should-not (memq 'willDisplayObjectAtIndexPath dst-requests))
        ;; The window shows the loading row: scrolling (redisplay runs the hook) loads page 2.
        (run-hook-with-args 'window-scroll-functions (selected-window) (window-start))
        (dst-status "loaded 8")
        (should (equal (length (dst-lines)) 9))
        ;; Within page-ahead lines of the end, a move loads the next page.
        (goto-char (point-min))
        (forward-line 6)
        (let ((datasourced-page-ahead 2))
          (dst-keys "C-n"))
        (dst-status "loaded 10")
        (should (equal (car (last (dst-trimmed-lines))) "10 Ubik"))))))

(ert-deftest datasourced-refresh-loads-page-one-again ()
  "g loads again from page one; with point on the last row, one page only."
  (dst-with-lists
    (with-current-buffer (datasourced-open (dst-spec "books.json"))
      (dst-status "loaded 4")
      (dst-keys "M->")
      (dst-status "loaded 8")
      (dst-keys "M->")
      (dst-status "loaded 10")
      (should (equal (dst-trimmed-lines) dst-all-by-genre))
      (setq dst-requests nil)
      (dst-keys "g")
      (should (memq 'fetchData dst-requests))
      (dst-wait (lambda () (equal (dst-trimmed-lines) (append dst-genres-page1 '("⋯ loading…"))))
                "page one again")
      (dst-status "loaded 4")
      (dst-ping)
      (should-not (memq 'willDisplayObjectAtIndexPath dst-requests))
      ;; Paging goes on from there as the user moves.
      (dst-keys "M->")
      (dst-status "loaded 8"))))

(ert-deftest datasourced-error-row-and-message ()
  "A failing source: its error row, a short message, the status and the hook.
failing.json stores no error placeholder: the row is the client's."
  (dst-with-lists
    (let* ((failures nil)
           (datasourced-failed-hook
            (list (lambda (failure) (push (cons (current-buffer) failure) failures))))
           (buffer (datasourced-open (dst-spec "failing.json")))
           (said "HTTP status 500: the database is on fire"))
      (with-current-buffer buffer
        (dst-status (concat "error: " said))
        (should (equal (dst-trimmed-lines)
                       (list (format "✗ error: %s/v1/broken: %s" dst-base-url said))))
        (goto-char (point-min))
        (should (eq (get-text-property (+ 2 (point)) 'face) 'datasourced-error))
        (should (member (concat "datasourced: broken: " said) dst-messages))
        ;; Short and in words: no URL, no protocol jargon.
        (should-not (cl-some (lambda (m) (string-match-p "code\\|-326\\|cancelFetch" m)) dst-messages))
        (should (equal (mapcar #'car failures) (list buffer)))
        (should (equal (plist-get (cdar failures) :kind) "http"))
        (should (equal (plist-get (cdar failures) :status) 500))
        (should (equal (plist-get datasourced-last-error :status) 500))
        ;; Opened again in another list after the failure, it loads again, and fails again.
        (let ((second (datasourced-open (dst-temp-spec "{\"name\": \"broken\", \"kind\": \"remote\",
  \"remoteConfiguration\": {\"baseURL\": \"${baseURL}\"}, \"apiPath\": \"/v1/broken\",
  \"title\": \"again\"}"))))
          (with-current-buffer second
            (dst-wait (lambda () (assq second failures)) "a failure in the second list")
            (dst-status (concat "error: " said))
            (should (equal (dst-trimmed-lines)
                           (list (format "✗ error: %s/v1/broken: %s" dst-base-url said))))
            (should-not (cl-some (lambda (m) (string-match-p "other settings" m)) dst-messages))))))))

(ert-deftest datasourced-cancel ()
  "C-c C-k cancels the load in flight: status cancelled, a plain message."
  (dst-with-lists
    (let ((spec (dst-temp-spec "{\"name\": \"slow\", \"kind\": \"remote\",
  \"remoteConfiguration\": {\"baseURL\": \"${baseURL}\"}, \"apiPath\": \"/v1/slow\",
  \"placeholderStorageOptions\": [\"loading\", \"noResults\", \"errors\"]}")))
      (with-current-buffer (datasourced-open spec)
        (dst-status "loading")
        (dst-wait (lambda () (equal (dst-trimmed-lines) '("⋯ loading…"))) "the loading row")
        (dst-keys "C-c C-k")
        (should (memq 'cancelFetch dst-requests))
        (dst-status "cancelled")
        (should (member "datasourced: slow: load cancelled" dst-messages))
        (should-not (cl-some (lambda (m) (string-match-p "cancelFetch" m)) dst-messages))
        (dst-wait (lambda () (not (member "⋯ loading…" (dst-trimmed-lines)))) "no loading row")
        ;; Nothing in flight: cancelling again says so.
        (dst-keys "C-c C-k")
        (dst-wait (lambda () (member "datasourced: slow is not loading: nothing to cancel" dst-messages))
                  "the nothing-to-cancel message")))))

(ert-deftest datasourced-cancel-during-the-first-page ()
  "C-c C-k while a paginated list's first page loads: no willDisplay is sent
for the loading row the cancel takes away (none failing, none said), and
the list says it was cancelled and how to load it, instead of going blank."
  (dst-with-lists
    (let ((spec (dst-temp-spec "{\"name\": \"slowPages\", \"kind\": \"paginated\", \"identityKey\": \"id\",
  \"remoteConfiguration\": {\"baseURL\": \"${baseURL}\"}, \"apiPath\": \"/v1/slow\",
  \"keyPath\": \"books\", \"pageSize\": 4, \"title\": \"Slow pages\", \"columns\": [\"id\", \"title\"]}")))
      (with-current-buffer (datasourced-open spec)
        (dst-status "loading")
        (dst-wait (lambda () (equal (dst-trimmed-lines) '("⋯ loading…"))) "the loading row")
        ;; Point is on the loading row, the list's last: a command there would page.
        (should (equal (car (tabulated-list-get-id)) 'loading))
        (setq dst-requests nil)
        (dst-keys "C-c C-k")
        (dst-status "cancelled")
        (dst-ping)
        (should (memq 'cancelFetch dst-requests))
        (should-not (memq 'willDisplayObjectAtIndexPath dst-requests))
        (should-not (cl-some (lambda (m) (string-match-p "failed\\|out of range" m)) dst-messages))
        (dst-wait (lambda () (equal (dst-trimmed-lines) '("load cancelled (g loads again)")))
                  "the cancelled state line")
        (goto-char (point-min))
        (should (eq (get-text-property (+ 2 (point)) 'face) 'datasourced-placeholder))
        ;; Moving on the state line asks for no page either.
        (dst-keys "C-a")
        (dst-ping)
        (should-not (memq 'willDisplayObjectAtIndexPath dst-requests))))))

(ert-deftest datasourced-close-releases-sources-and-ends-the-daemon ()
  "q destroys the sources a list created; the last list's q ends the daemon."
  (dst-with-lists
    (let* ((books (datasourced-open (dst-spec "books.json")))
           (broken (datasourced-open (dst-spec "failing.json")))
           (daemon (buffer-local-value 'datasourced--daemon books))
           (process (jsonrpc--process (datasourced--daemon-connection daemon))))
      (should (eq daemon (buffer-local-value 'datasourced--daemon broken)))
      (with-current-buffer broken (dst-wait (lambda () (string-prefix-p "error" datasourced-status)) "the error"))
      (with-current-buffer books (dst-status "loaded 4"))
      (with-current-buffer broken (dst-keys "q"))
      (should-not (buffer-live-p broken))
      (let ((names (lambda ()
                     (mapcar (lambda (s) (plist-get s :name))
                             (jsonrpc-request (datasourced--daemon-connection daemon)
                                              'listSources (make-hash-table))))))
        (dst-wait (lambda () (not (member "broken" (funcall names)))) "broken destroyed")
        (should (equal (funcall names) '("books" "byGenre"))))
      (should (process-live-p process))
      (with-current-buffer books (dst-keys "q"))
      (should-not (buffer-live-p books))
      (dst-wait (lambda () (not (process-live-p process))) "the daemon to end")
      (should (equal (process-exit-status process) 0)))))

(ert-deftest datasourced-spec-shorthand-and-show-string ()
  "A bare source is one source, its display members taken out; a string show is one name."
  (let ((datasourced-variables '(("baseURL" . "http://127.0.0.1:9"))))
    (let ((spec (datasourced-read-spec
                 (dst-temp-spec "{\"name\": \"books\", \"kind\": \"paginated\", \"title\": \"Mine\",
  \"columns\": [\"id\", {\"key\": \"title\", \"width\": 10}], \"maxPages\": 2,
  \"remoteConfiguration\": {\"baseURL\": \"${baseURL}/api\"}, \"apiPath\": \"books\"}"))))
      (should (equal (plist-get spec :show) "books"))
      (should (equal (plist-get spec :title) "Mine"))
      (should (equal (plist-get spec :columns) '(("id" "id" nil) ("title" "title" 10))))
      (let ((params (car (plist-get spec :sources))))
        (should (= (length (plist-get spec :sources)) 1))
        (should (equal (sort (hash-table-keys params) #'string<)
                       '("apiPath" "kind" "name" "remoteConfiguration")))
        (should (equal (gethash "baseURL" (gethash "remoteConfiguration" params))
                       "http://127.0.0.1:9/api"))))
    (let ((spec (datasourced-read-spec
                 (dst-temp-spec "{\"sources\": [{\"name\": \"books\", \"kind\": \"simple\"},
  {\"name\": \"byGenre\", \"kind\": \"sectioned\", \"source\": \"books\", \"sectioningKey\": \"g\"}],
  \"show\": \"books\"}"))))
      (should (equal (plist-get spec :show) "books"))
      (should (equal (plist-get spec :title) "books")))
    (should (equal (plist-get (datasourced-read-spec
                               (dst-temp-spec "{\"sources\": [{\"name\": \"a\", \"kind\": \"simple\"},
  {\"name\": \"b\", \"kind\": \"simple\"}], \"show\": [\"b\", \"a\"]}"))
                              :show)
                   "b"))
    (let ((err (should-error (datasourced-read-spec
                              (dst-temp-spec "{\"sources\": [{\"name\": \"books\", \"kind\": \"simple\"}],
  \"show\": \"bygenre\"}"))
                             :type 'user-error)))
      (should (string-match-p "\"show\" names bygenre, which is not one of its sources (books)"
                              (cadr err)))))
  ;; And opened: a simple source's rows, in the spec's columns.
  (dst-with-lists
    (with-current-buffer (datasourced-open (dst-temp-spec "{\"name\": \"letters\", \"kind\": \"simple\",
  \"identityKey\": \"k\", \"objects\": [{\"id\": 1, \"k\": \"a\"}, {\"id\": 2, \"k\": \"b\"}], \"show\": \"letters\"}"))
      (dst-status "loaded 2")
      (should (equal (buffer-name) "*datasourced: letters*"))
      (should (equal (dst-trimmed-lines) '("k: a  id: 1" "k: b  id: 2"))))))

(ert-deftest datasourced-unknown-variable ()
  "A ${NAME} missing from `datasourced-variables' is refused, naming it and the file."
  (let* ((datasourced-variables '(("other" . "x")))
         (err (should-error (datasourced-read-spec (dst-spec "books.json")) :type 'user-error)))
    (should (string-match-p "books\\.json: unknown variable \\${baseURL}" (cadr err)))
    (should (string-match-p "datasourced-variables" (cadr err))))
  (let ((datasourced-variables '(("baseURL" . "http://h:1"))))
    (should (equal (datasourced--substitute "a$$b${baseURL}${baseURL}" "f") "a$$bhttp://h:1http://h:1"))))

(ert-deftest datasourced-missing-daemon ()
  "No daemon: the list says so, and how to set `datasourced-command'."
  (dst-with-lists
    (let* ((datasourced-command '("/nonexistent/datasourced"))
           (failures nil)
           (datasourced-failed-hook (list (lambda (f) (push f failures)))))
      (with-current-buffer (datasourced-open (dst-spec "books.json"))
        (let ((text (buffer-string)))
          (should (string-match-p "The daemon /nonexistent/datasourced was not found" text))
          (should (string-match-p "Set `datasourced-command' to its path" text)))
        (should (equal datasourced-status "error: the daemon did not start"))
        (should (member "datasourced: the daemon /nonexistent/datasourced was not found: set `datasourced-command' (see the list)" dst-messages))
        (should (equal (plist-get (car failures) :kind) "daemon"))
        ;; Fixed, g starts it.
        (setq datasourced-command (list dst-daemon))
        (dst-keys "g")
        (dst-status "loaded 4")))))

(ert-deftest datasourced-toml-spec ()
  "A TOML spec reads as its JSON twin; without a TOML reader, a clear refusal."
  (let ((file (make-temp-file "datasourced-spec" nil ".toml"
                              "title = \"T\"\nshow = \"b\"\n[[sources]]\nname = \"b\"\nkind = \"simple\"\n")))
    (if (not (eql 0 (call-process datasourced-python-command nil nil nil "-c" "import tomllib")))
        (ert-skip "no python3 with tomllib here")
      (let ((spec (datasourced-read-spec file)))
        (should (equal (plist-get spec :title) "T"))
        (should (equal (gethash "kind" (car (plist-get spec :sources))) "simple"))))
    (let* ((datasourced-python-command "/nonexistent/python3")
           (err (should-error (datasourced-read-spec file) :type 'user-error)))
      (should (string-match-p "write the spec as JSON" (cadr err))))))

(ert-deftest datasourced-sources-and-health ()
  "The sources and health reports name the lists, the daemon and its protocol."
  (dst-with-lists
    (with-current-buffer (datasourced-open (dst-spec "books.json"))
      (dst-status "loaded 4"))
    (with-current-buffer (datasourced-sources)
      (should (string-match-p "shows byGenre, made from .*books" (buffer-string))))
    (with-current-buffer (datasourced-health)
      (should (string-match-p "^OK datasourced .*, protocol 1\\.[0-9]" (buffer-string)))
      (should (string-match-p "^OK a round trip takes" (buffer-string))))))

(ert-deftest datasourced-refused-source ()
  "A source the daemon refuses: its words in the list and the echo area, no codes."
  (dst-with-lists
    (with-current-buffer (datasourced-open (dst-temp-spec "{\"name\": \"books\", \"kind\": \"paginated\",
  \"remoteConfiguration\": {\"baseURL\": \"${baseURL}\"}, \"apiPath\": \"/v1/books\", \"pageSize\": \"4\"}"))
      (dst-wait (lambda () (string-prefix-p "error: cannot create the source books" datasourced-status))
                "the refusal")
      (let ((text (buffer-string)))
        (should (string-match-p "\\`  *cannot create the source books: \"pageSize\" must be" text))
        (should-not (string-match-p "Invalid params\\|-32602\\|code" text)))
      (should (cl-some (lambda (m) (string-prefix-p "datasourced: cannot create the source books: \"pageSize\"" m))
                       dst-messages)))))

(ert-deftest datasourced-refused-source-reopened ()
  "A refused spec opened again: the daemon it had ends quietly (jsonrpc's
\"Server exited\" never reaches the echo area) and the refusal, naming the
source, is the last thing said."
  (dst-with-lists
    (let* ((spec (dst-temp-spec "{\"name\": \"books\", \"kind\": \"paginated\", \"title\": \"Refused\",
  \"remoteConfiguration\": {\"baseURL\": \"${baseURL}\"}, \"apiPath\": \"/v1/books\", \"pageSize\": \"4\"}"))
           (refused (lambda () (string-prefix-p "error: cannot create the source books" datasourced-status)))
           (refusal "datasourced: cannot create the source books: \"pageSize\" must be"))
      (with-current-buffer (datasourced-open spec)
        (dst-wait refused "the refusal")
        (let ((first datasourced--daemon))
          (setq dst-messages nil)
          (should (eq (datasourced-open spec) (current-buffer)))
          (should-not (eq datasourced--daemon first))
          (dst-wait refused "the refusal again")
          (dst-wait (lambda () (datasourced--daemon-exited first)) "the first daemon to end")
          (should (equal (process-exit-status (jsonrpc--process (datasourced--daemon-connection first))) 0))
          (dst-ping)
          (should-not (cl-some (lambda (m) (string-match-p "jsonrpc\\|exited" m)) dst-messages))
          (should (string-prefix-p refusal (car dst-messages))))))
    ;; Nor when the last list is closed, its daemon ending.
    (let ((daemon (buffer-local-value 'datasourced--daemon (get-buffer "*datasourced: Refused*"))))
      (setq dst-messages nil)
      (kill-buffer "*datasourced: Refused*")
      (dst-wait (lambda () (datasourced--daemon-exited daemon)) "the daemon to end")
      (should-not (cl-some (lambda (m) (string-match-p "jsonrpc\\|exited" m)) dst-messages)))))

(ert-deftest datasourced-daemon-exit-and-restart ()
  "A daemon that dies: the list says so, and g starts it again."
  (dst-with-lists
    (with-current-buffer (datasourced-open (dst-spec "books.json"))
      (dst-status "loaded 4")
      (signal-process (jsonrpc--process (datasourced--daemon-connection datasourced--daemon)) 'kill)
      (dst-status "daemon exited")
      (should (cl-some (lambda (m) (string-match-p "the daemon exited .*g in a list starts it again" m))
                       dst-messages))
      (dst-keys "g")
      (dst-status "loaded 4")
      (should (equal (dst-trimmed-lines) (append dst-genres-page1 '("⋯ loading…")))))))

(ert-deftest datasourced-change-set-application ()
  "Change sets apply to the rows: deletions, moves, insertions and updates."
  (with-temp-buffer
    (setq datasourced--sections (list (cons "a" (list 1 2 3)) (cons "b" (list 4))))
    (should (equal (datasourced--apply
                    '(:deletedSections [] :insertedSections [] :deleted [[0 1]]
                      :inserted [[1 0] [1 2]] :moved [(:from [0 2] :to [0 0])] :updated [[0 1]])
                    '(:inserted [10 11] :updated [100]))
                   (list (cons "a" (list 3 100)) (cons "b" (list 10 4 11)))))
    ;; Runs of rows (the changeRanges capability): [section, item, count].
    (setq datasourced--sections (list (cons "a" (list 1 2 3)) (cons "b" (list 4 5))))
    (should (equal (datasourced--apply '(:deleted [[0 0 2]] :inserted [[0 1 2]] :updated [[1 0 2]])
                                       '(:inserted [10 11] :updated [40 50]))
                   (list (cons "a" (list 3 10 11)) (cons "b" (list 40 50)))))
    (should-error (datasourced--apply '(:inserted [[0 9]]) '(:inserted [5])))
    (should-error (datasourced--apply '(:inserted [[0 0]]) nil))))

;;;; Counted lists: /v1/million, 1,000,000 rows in pages of 100, of which the
;;;; fixture API serves pages 1, 2 and 10000 (a request for any other page fails).

(defconst dst-million 1000000)

(defun dst-display-at (position)
  "Does what a redisplay reaching POSITION does when it is not fontified yet:
runs `fontification-functions' there (jit-lock, which fontifies a chunk from
it). Batch Emacs has no redisplay of its own."
  (when (and (< position (point-max)) (not (get-text-property position 'fontified)))
    (run-hook-with-args 'fontification-functions position)))

(defun dst-display (&optional window)
  "Does what a redisplay of WINDOW (default: the selected one) does to the
lines it shows: each, from its start over its body's height, is fontified if
it is not yet."
  (let ((window (or window (selected-window))))
    (with-current-buffer (window-buffer window)
      (save-excursion
        (goto-char (window-start window))
        (dotimes (_ (window-body-height window))
          (dst-display-at (point))
          (forward-line 1))))))

(defun dst-shown (n)
  "What line N (from 1) of a counted list shows over its empty text, once it
is displayed: its newline's display string, or the last line's overlay's
before-string, as a string with its properties; else nil."
  (save-excursion
    (goto-char (point-min))
    (forward-line (1- n))
    (dst-display-at (point))
    (let ((drawn (or (get-text-property (point) 'display)
                     (cl-some (lambda (o) (overlay-get o 'before-string)) (overlays-in (point) (point))))))
      (and (stringp drawn) (string-remove-suffix "\n" drawn)))))

(defun dst-line (n)
  "The text line N (from 1) shows, trimmed: its own, or, an empty line of a
counted list, what is drawn over it once it is displayed (`dst-shown')."
  (save-excursion
    (goto-char (point-min))
    (forward-line (1- n))
    (let ((text (buffer-substring-no-properties (line-beginning-position) (line-end-position))))
      (string-trim (if (string-empty-p text) (or (dst-shown n) "") text)))))

(defun dst-lines-count ()
  "The buffer's lines: a counted list's last line may be empty, with no newline."
  (line-number-at-pos (point-max)))

(defun dst-wait-line (n text)
  "Waits until line N reads TEXT; fails naming what it reads (not the whole
buffer, of a million lines)."
  (let ((deadline (+ (float-time) 30)))
    (while (and (not (equal (dst-line n) text)) (< (float-time) deadline))
      (accept-process-output nil 0.02))
    (unless (equal (dst-line n) text)
      (ert-fail (list (format "timed out waiting for line %d to read %S" n text)
                      :it-reads (dst-line n) :status datasourced-status)))))

(defun dst-open-million ()
  "Opens the counted list of a million rows and waits for its first page."
  (let ((buffer (datasourced-open (dst-spec "million.json"))))
    (set-buffer buffer)
    (dst-wait (lambda () (equal datasourced-status "loaded 100 of 1000000")) "the first page" 30)
    (dst-wait-line 1 "Row 1")
    buffer))

(ert-deftest datasourced-counted-list-full-size-dim-unloaded-rows ()
  "A counted list has its full size at once: its unloaded rows are dim
`… row N' lines, not JSON, and only the rows shown are read."
  (dst-with-lists
    (let* ((statuses nil)
           (watch (lambda (_symbol value operation _where)
                    (when (eq operation 'set) (push value statuses))))
           (buffer (progn (add-variable-watcher 'datasourced-status watch)
                          (unwind-protect (dst-open-million)
                            (remove-variable-watcher 'datasourced-status watch)))))
      ;; Not "loaded 0": the list taking its size is counted once its rows are read.
      (should (equal (cl-remove-if-not (lambda (s) (string-prefix-p "loaded" s)) statuses)
                     '("loaded 100 of 1000000")))
      (set-buffer buffer)
      (should (= (dst-lines-count) dst-million))
      (should (equal (dst-line 101) "… row 101"))
      (should (equal (dst-line dst-million) "… row 1000000"))
      (should-not (string-match-p "\\$placeholder" (buffer-substring (point-min) (+ (point-min) 20000))))
      (should (eq (get-text-property 3 'face (dst-shown 101)) 'datasourced-unloaded))
      (should (eq (get-text-property 3 'face (dst-shown dst-million)) 'datasourced-unloaded))
      (should (eq (face-attribute 'datasourced-unloaded :inherit) 'shadow))
      ;; A million rows: no allObjects once the list is loading (the one before is of
      ;; the empty list), reads of the rows shown (objectsInSection).
      (dst-ping)
      (should (memq 'fetchData dst-requests))
      (should-not (memq 'allObjects (cl-subseq dst-requests 0 (cl-position 'fetchData dst-requests))))
      (should (memq 'objectsInSection dst-requests))
      ;; Row 90 is loaded but far from the window: not read until point goes there.
      (should (equal (dst-line 90) "… row 90"))
      (setq dst-requests nil)
      (goto-char (point-min))
      (dst-keys "C-u 89 C-n")
      (dst-wait-line 90 "Row 90")
      (dst-ping)
      (should-not (memq 'willDisplayObjectAtIndexPath dst-requests)))))

(ert-deftest datasourced-counted-list-jumps-to-the-end-and-back ()
  "M-> on a counted list loads only the last page (a jump); M-< the first again."
  (dst-with-lists
    (with-current-buffer (dst-open-million)
      (setq dst-requests nil)
      (dst-keys "M->")
      (dst-wait-line dst-million "Row 1000000")
      (should (= (line-number-at-pos) dst-million))
      (dst-wait-line 1 "… row 1") ; page one unloaded again by the jump
      ;; The last page's first row, read as point goes there; the row before is unloaded.
      (dst-keys "C-u 99 C-p")
      (dst-wait-line 999901 "Row 999901")
      (dst-wait (lambda () (datasourced--unloaded-p 999899)) "row 999,900 read, unloaded")
      (should (equal (dst-line 999900) "… row 999900"))
      (dst-keys "M->")
      (should (= (dst-lines-count) dst-million))
      (let ((description (jsonrpc-request (datasourced--daemon-connection datasourced--daemon)
                                          'describeSource (list :source "million"))))
        (should (string-suffix-p "/v1/million?page=10000&page_size=100" (plist-get description :lastURL))))
      (should (= (cl-count 'willDisplayObjectAtIndexPath dst-requests) 1))
      (dst-status "loaded 100 of 1000000")
      (dst-keys "M-<")
      (dst-wait-line 1 "Row 1")
      (dst-wait-line dst-million "… row 1000000")
      (should (= (cl-count 'willDisplayObjectAtIndexPath dst-requests) 2))
      ;; g loads it again where the rows were last displayed (the daemon's window
      ;; focus): the last page, the same rows, in a list of the full size.
      (dst-keys "M->")
      (dst-wait-line dst-million "Row 1000000")
      (setq dst-requests nil)
      (dst-keys "g")
      (should (memq 'fetchData dst-requests))
      (dst-ping)
      (dst-status "loaded 100 of 1000000")
      (dst-wait-line dst-million "Row 1000000")
      (should (equal (dst-line 1) "… row 1"))
      (should (= (dst-lines-count) dst-million))
      ;; A filter would read the million rows of its filtered source: refused, saying so.
      (should (string-match-p "filtering a counted list of 1000000 rows is not supported"
                              (cadr (should-error (datasourced-set-filter "x") :type 'user-error)))))))

(ert-deftest datasourced-counted-list-held-keys-ask-once ()
  "Keys held down over unloaded rows send one willDisplay, for the row
where point rests; its page loads next to the loaded ones (no jump).
RET on an unloaded row asks at once."
  (dst-with-lists
    (with-current-buffer (dst-open-million)
      (goto-char (point-min))
      (forward-line 99)
      (dst-ping)
      (setq dst-requests nil)
      (dst-keys "C-n C-n C-n C-n C-n")
      (dst-wait-line 101 "Row 101")
      (should (equal (dst-line (line-number-at-pos)) "Row 105"))
      (should (= (cl-count 'willDisplayObjectAtIndexPath dst-requests) 1))
      (should (equal (dst-line 1) "Row 1"))
      ;; RET, before the pause is over: at once.
      (let ((datasourced-display-delay 600))
        (goto-char (point-max))
        (dst-keys "RET")
        (dst-wait-line dst-million "Row 1000000")
        (should (= (cl-count 'willDisplayObjectAtIndexPath dst-requests) 2))))))

(ert-deftest datasourced-counted-list-ends-ask-at-once ()
  "On the first or the last row of a counted list, point asks for its page
at once, however long `datasourced-display-delay' is: keys held there cannot
take it further. M-> loads the last page, M-< the first, one willDisplay each."
  (dst-with-lists
    (with-current-buffer (dst-open-million)
      (let ((datasourced-display-delay 600))
        (setq dst-requests nil)
        (dst-keys "M->")
        (dst-wait-line dst-million "Row 1000000")
        (should (= (cl-count 'willDisplayObjectAtIndexPath dst-requests) 1))
        (dst-keys "M-<")
        (dst-wait-line 1 "Row 1")
        (dst-ping)
        (should (= (cl-count 'willDisplayObjectAtIndexPath dst-requests) 2))))))

(defun dst-drawn-lines ()
  "The lines (from 1) of a counted list that have a text or have something
drawn over them (a display string, an overlay's before-string): what Emacs
did per row. Found by C scans, not a walk over a million lines."
  (let ((lines nil))
    (save-excursion
      (goto-char (point-min))
      (while (re-search-forward "[^\n]" nil t)
        (push (line-number-at-pos) lines)
        (forward-line 1))
      (let ((position (point-min)))
        (while (setq position (if (get-text-property position 'display)
                                  position
                                (next-single-property-change position 'display)))
          (push (line-number-at-pos position) lines)
          (setq position (next-single-property-change position 'display))))
      (dolist (overlay (overlays-in (point-min) (point-max)))
        (when (overlay-get overlay 'before-string)
          (push (line-number-at-pos (overlay-start overlay)) lines))))
    (sort (delete-dups lines) #'<)))

(ert-deftest datasourced-counted-list-draws-only-what-is-shown ()
  "A counted list of a million rows is a million lines from the moment its
first row shows, and only the lines shown have a text or a drawn `… row N':
after the open, and after M-> too, every such line is within a few window
heights of the window's lines (a redisplay simulated: batch Emacs has none)."
  (dst-with-lists
    (with-current-buffer (datasourced-open (dst-spec "million.json"))
      (let ((lines-at-first-row nil) (height (window-body-height)))
        (dst-wait (lambda ()
                    (when (string-match-p "Row 1\\b" (buffer-substring (point-min) (line-end-position 1)))
                      (setq lines-at-first-row (dst-lines-count))))
                  "the first row" 30)
        (should (= lines-at-first-row dst-million))
        (dst-display)
        (should (equal (dst-line 1) "Row 1"))
        ;; The last row's line, which has no newline to carry its text, is drawn by
        ;; an overlay of its own, whatever is shown.
        (let ((drawn (delete dst-million (dst-drawn-lines))))
          (should drawn)
          (should (<= (car (last drawn)) (* 3 height))))
        ;; A window showing unloaded rows draws them, and only them.
        (dst-status "loaded 100 of 1000000")
        (let ((window-start (progn (goto-char (point-min)) (forward-line 499) (point))))
          (set-window-start nil window-start)
          (goto-char window-start)
          (dst-display)
          (should (equal (dst-line 500) "… row 500"))
          (should (string-prefix-p "  … row 500" (get-text-property window-start 'display)))
          (should (cl-every (lambda (line) (or (<= line (* 3 height)) (<= 500 line (+ 500 (* 3 height)))))
                            (delete dst-million (dst-drawn-lines)))))
        (dst-keys "M->")
        (dst-wait-line dst-million "Row 1000000")
        (set-window-start nil (save-excursion (forward-line (- 3 height)) (point)))
        (dst-display)
        (should (= (line-number-at-pos) dst-million))
        (let ((drawn (dst-drawn-lines)))
          (should (<= (length drawn) (* 6 height)))
          (should (cl-every (lambda (line) (or (<= line (* 3 height))
                                               (<= 500 line (+ 500 (* 3 height)))
                                               (>= line (- dst-million (* 3 height)))))
                            drawn)))
        ;; C-s finds the rows read: backwards from the last, row 999,990.
        (dst-keys "C-r Row SPC 999990 RET")
        (should (= (line-number-at-pos) 999990))))))

(defun dst-record-change (beg end old-length)
  "Adds the characters a change from BEG to END, of OLD-LENGTH before, wrote."
  (setq dst-changed (+ dst-changed old-length (- end beg))))

(defvar dst-changed 0 "The characters deleted and inserted, as `dst-record-change' counts them.")

(ert-deftest datasourced-counted-list-read-again-writes-over-its-lines ()
  "A counted list read again (g, or a change set that is not rows updated in
place) keeps its million lines: the lines with a text are emptied and written
again, no million deleted and inserted; point and the window keep their rows."
  (dst-with-lists
    (with-current-buffer (dst-open-million)
      ;; The window from row 80, point on row 91: rows of page one and unloaded ones.
      (progn
        (set-window-start nil (progn (goto-char (point-min)) (forward-line 79) (point)))
        (forward-line 10)
        (dst-keys "C-n")
        (dst-wait-line 91 "Row 91")
        (dst-wait-line 101 "… row 101")
        (dst-display)
        (setq dst-changed 0)
        (add-hook 'after-change-functions #'dst-record-change nil t)
        (unwind-protect
            (progn
              ;; What a change set that is not only rows updated in place does.
              (datasourced--read)
              (dst-wait (lambda () (not datasourced--reading)) "the list read again")
              (dst-wait-line 91 "Row 91")
              ;; The load g starts has ended once the loaded hook runs (no dst-ping here:
              ;; Emacs 28's jsonrpc leaves the messages that came with the answer to a
              ;; jsonrpc-request unread until the daemon writes again).
              (let* ((reloaded nil)
                     (datasourced-loaded-hook (list (lambda () (setq reloaded t)))))
                (dst-keys "g")
                (dst-wait (lambda () reloaded) "the load g started to end"))
              (dst-status "loaded 100 of 1000000")
              (dst-wait-line 91 "Row 91"))
          (remove-hook 'after-change-functions #'dst-record-change t))
        (should (< dst-changed 20000))
        (should (= (dst-lines-count) dst-million))
        (should (= (line-number-at-pos (window-start)) 80))
        (should (= (line-number-at-pos) 91))
        (dst-display)
        (dst-wait-line 91 "Row 91")
        (should (equal (dst-line 101) "… row 101"))
        (should (equal (dst-line dst-million) "… row 1000000"))))))

(ert-deftest datasourced-counted-list-then-an-ordinary-one-in-its-buffer ()
  "A buffer that showed a counted list and is opened again with an ordinary
list shows that list's rows, nothing drawn over them, and filters it."
  (dst-with-lists
    (let ((buffer (dst-open-million))
          (books (dst-temp-spec "{\"title\": \"A million rows\", \"name\": \"books\", \"kind\": \"paginated\",
  \"remoteConfiguration\": {\"baseURL\": \"${baseURL}\"}, \"apiPath\": \"/v1/books\", \"keyPath\": \"books\",
  \"pageSize\": 4, \"identityKey\": \"id\", \"columns\": [{\"key\": \"id\", \"width\": 4}, {\"key\": \"title\", \"width\": 18}]}")))
      (with-current-buffer buffer
        (dst-keys "M->")
        (dst-wait-line dst-million "Row 1000000"))
      (unwind-protect
          (should (eq (datasourced-open books) buffer))
        (delete-file books))
      (with-current-buffer buffer
        (dst-status "loaded 4")
        (dst-display)
        (should (equal (dst-trimmed-lines)
                       '("1    Dune" "2    Gaudy Night" "3    Ariel" "4    Solaris" "⋯ loading…")))
        ;; (tabulated-list aligns its columns with display specs: those are no text.)
        (should-not (cl-loop for position from (point-min) below (point-max)
                             thereis (stringp (get-text-property position 'display))))
        (should-not (overlays-in (point-min) (point-max)))
        (datasourced-set-filter "night")
        (dst-wait (lambda () (equal (remove "⋯ loading…" (dst-trimmed-lines)) '("2    Gaudy Night")))
                  "the rows matching night")))))

;;;; Filters and searches

(defun dst-match-texts ()
  "The characters highlighted as a filter's matches, in buffer order."
  (mapcar (lambda (overlay) (buffer-substring (overlay-start overlay) (overlay-end overlay)))
          (sort (cl-remove-if-not (lambda (o) (overlay-get o 'datasourced-match))
                                  (overlays-in (point-min) (point-max)))
                (lambda (a b) (< (overlay-start a) (overlay-start b))))))

(ert-deftest datasourced-filter-as-you-type ()
  "/ filters as each key is typed (one setFilter per change), ranked within
the sections, matches highlighted; RET keeps the filter, C-g clears it.
The window is one line high: the filter fills one row, and the pages
after it are asked for as point moves."
  (dst-with-lists
    (with-current-buffer (datasourced-open (dst-spec "books.json"))
      (dst-status "loaded 4")
      (dst-window-lines 1)
      (setq dst-requests nil)
      (dst-keys "/ a r RET")
      (dst-wait (lambda () (equal (dst-trimmed-lines)
                                  '("science fiction" "4    Solaris            1959"
                                    "poetry" "3    Ariel              1956" "⋯ loading…")))
                "the rows matching ar")
      ;; The keys came before the filtered source was made: its first setFilter has
      ;; the last query.
      (should (equal (cl-count 'createSource dst-requests) 1))
      (dst-wait (lambda () (equal (dst-match-texts) '("a" "r" "A" "r"))) "the matches highlighted")
      (should (string-prefix-p "byGenre/filter#" datasourced--source))
      (let ((description (jsonrpc-request (datasourced--daemon-connection datasourced--daemon)
                                          'describeSource (list :source datasourced--source))))
        (should (equal (plist-get description :kind) "filtered"))
        (should (equal (plist-get description :match) '(:query "ar" :keyPaths ["id" "title" "year"]))))
      (dst-status "loaded 2")
      ;; Once the filter is made, each change of the prompt is a setFilter.
      (setq dst-requests nil)
      (dst-keys "/ C-a C-k s o RET")
      (dst-wait (lambda () (equal (dst-trimmed-lines)
                                  '("science fiction" "4    Solaris            1959" "⋯ loading…")))
                "the rows matching so")
      (should (equal (cl-count 'setFilter dst-requests) 3)) ; "", "s", "so"
      (datasourced-set-filter "ar")
      (dst-status "loaded 2")
      ;; Paging goes on through the filter: page two has no match, so its loading row
      ;; asks for page three, whose Leaves of Grass matches.
      (goto-char (point-max))
      (dst-keys "C-p")
      (dst-wait (lambda () (member "9    Leaves of Grass    1974" (dst-trimmed-lines))) "page three, filtered")
      (should-not (member "⋯ loading…" (dst-trimmed-lines)))
      ;; The prompt starts from the kept query; C-g shows every row again.
      (dst-keys "/ x C-g")
      (dst-wait (lambda () (equal (dst-trimmed-lines) dst-all-by-genre)) "every row again")
      (should (equal (dst-match-texts) nil)))))

(ert-deftest datasourced-filter-fills-the-window ()
  "A filter whose matches are on a later page fills the window: the filtered
source has the window's height as its fill (createSource, then setFilter), so
the daemon loads pages until it has that many rows or no page is left, and
point stays where it was, at the top."
  (dst-with-lists
    (with-current-buffer (datasourced-open (dst-spec "books.json"))
      (dst-status "loaded 4")
      (goto-char (point-min))
      (dst-keys "/ u b i k RET")
      (dst-wait (lambda () (equal (dst-trimmed-lines) '("science fiction" "10   Ubik               1977")))
                "Ubik, from page three, the pages loaded")
      (should (= (line-number-at-pos) 1))
      (should (= (window-start) (point-min)))
      (let ((description (jsonrpc-request (datasourced--daemon-connection datasourced--daemon)
                                          'describeSource (list :source datasourced--source))))
        (should (equal (plist-get description :fill) (window-body-height))))
      ;; A window of another height: the next query fills that many rows.
      (dst-window-lines 3)
      (datasourced-set-filter "o")
      (dst-wait (lambda ()
                  (equal (plist-get (jsonrpc-request (datasourced--daemon-connection datasourced--daemon)
                                                     'describeSource (list :source datasourced--source))
                                    :fill)
                         (window-body-height)))
                "the fill of the smaller window"))))

(defun dst-line-at-point ()
  "The line at point, trimmed."
  (string-trim (buffer-substring-no-properties (line-beginning-position) (line-end-position))))

(ert-deftest datasourced-filter-quit-shows-the-top ()
  "C-g in the filter's prompt, after a filter: every row again, point on the
row it was on (not the row that took its place) and the window showing the top
of the list when the list fits in it (not scrolled, its top rows hidden and
its end mid-window); in a window shorter than the list, point's row stays in
view, as many lines from the window's top as before."
  (dst-with-lists
    (with-current-buffer (datasourced-open (dst-spec "books.json"))
      (dst-status "loaded 4")
      (dst-keys "M->")
      (dst-status "loaded 8")
      (dst-keys "M->")
      (dst-status "loaded 10")
      (should (equal (dst-trimmed-lines) dst-all-by-genre))
      (dst-goto-row "9    Leaves of Grass    1974")
      (set-window-start nil (point-min))
      (dst-keys "/ a r RET")
      (dst-wait (lambda () (equal (dst-trimmed-lines)
                                  '("science fiction" "4    Solaris            1959" "poetry"
                                    "3    Ariel              1956" "9    Leaves of Grass    1974")))
                "the rows matching ar")
      (should (equal (dst-line-at-point) "9    Leaves of Grass    1974"))
      (dst-keys "/ C-g")
      (dst-wait (lambda () (equal (dst-trimmed-lines) dst-all-by-genre)) "every row again")
      (dst-ping)
      (should (equal (dst-line-at-point) "9    Leaves of Grass    1974"))
      (should (= (window-start) (point-min)))
      ;; A window of 5 lines, point on Ariel, the third line of the filtered list.
      (dst-window-lines 5)
      (datasourced-set-filter "ar")
      (dst-wait (lambda () (= (length (dst-lines)) 5)) "the rows matching ar")
      (dst-goto-row "3    Ariel              1956")
      (set-window-start nil (point-min))
      (dst-keys "/ C-g")
      (dst-wait (lambda () (equal (dst-trimmed-lines) dst-all-by-genre)) "every row again")
      (dst-ping)
      (should (equal (dst-line-at-point) "3    Ariel              1956"))
      (should (= (count-lines (window-start) (line-beginning-position)) 3)))))

(ert-deftest datasourced-filter-made-during-a-load ()
  "A filter made while a page loads: the filtered source has no cycle of its
own for that page, so its child's end ends the list's load (the status is
not left at loading), and paging goes on."
  (dst-with-lists
    (with-current-buffer (datasourced-open (dst-spec "books.json"))
      (dst-status "loaded 4")
      (dst-window-lines 1)
      ;; M-> asks for page two; the filter is made before its answer.
      (dst-keys "M->")
      (should (memq 'willDisplayObjectAtIndexPath dst-requests))
      (datasourced-set-filter "ar")
      (dst-wait (lambda () (string-prefix-p "byGenre/filter#" datasourced--source)) "the filtered source")
      (dst-wait (lambda () (string-prefix-p "loaded" datasourced-status)) "page two's end, not loading")
      ;; Point at the end pages on (by itself, or by the next M->).
      (dst-keys "M->")
      (dst-wait (lambda () (member "9    Leaves of Grass    1974" (dst-trimmed-lines))) "page three, filtered")
      (dst-status "loaded 3")
      (should-not datasourced--in-flight))))

(ert-deftest datasourced-filter-hides-emptied-sections ()
  "A section whose rows all fail the filter has no header row while it is
empty; its header comes back with its rows."
  (dst-with-lists
    (with-current-buffer (datasourced-open (dst-spec "books.json"))
      (dst-status "loaded 4")
      ;; The window is taller than the list: the filter loads every page.
      (datasourced-set-filter "ar")
      (dst-wait (lambda () (equal (dst-trimmed-lines)
                                  '("science fiction" "4    Solaris            1959" "poetry"
                                    "3    Ariel              1956" "9    Leaves of Grass    1974")))
                "the rows matching ar, without the emptied mystery")
      (datasourced-set-filter "sleep")
      (dst-wait (lambda () (equal (dst-trimmed-lines) '("mystery" "5    The Big Sleep      1962")))
                "the row matching sleep, one section")
      (datasourced-set-filter "zzz")
      (dst-wait (lambda () (equal (dst-trimmed-lines) '("(no results)")))
                "no row matching zzz, and no header")
      (datasourced-set-filter "")
      (dst-wait (lambda () (equal (dst-trimmed-lines) dst-all-by-genre))
                "every section again"))))

(ert-deftest datasourced-set-filter-and-search ()
  "`datasourced-set-filter' filters; `datasourced-search' sets the spec's
search parameter of the remote source in place (updateSource), as typed."
  (dst-with-lists
    (let ((spec (dst-temp-spec "{\"name\": \"found\", \"kind\": \"remote\", \"identityKey\": \"id\",
  \"remoteConfiguration\": {\"baseURL\": \"${baseURL}\"}, \"apiPath\": \"/v1/search\",
  \"keyPath\": \"books\", \"title\": \"Search\", \"columns\": [\"id\", \"title\"],
  \"search\": {\"parameter\": \"q\", \"debounceMilliseconds\": 100}}")))
      (with-current-buffer (datasourced-open spec)
        (dst-status "loaded 4")
        (datasourced-search "dune")
        (dst-wait (lambda () (equal (dst-trimmed-lines) '("1  Dune"))) "the answer to q=dune")
        (setq dst-requests nil)
        (dst-keys "s C-a C-k n i g h t RET")
        (dst-wait (lambda () (equal (dst-trimmed-lines) '("2  Gaudy Night"))) "the answer to q=night")
        ;; A search per change ("", then a letter at a time); those overtaken before
        ;; their turn send no update, and the last one's rows are shown.
        (should (>= (cl-count 'describeSource dst-requests) 6))
        (should (>= (cl-count 'updateSource dst-requests) 1))
        (let ((description (jsonrpc-request (datasourced--daemon-connection datasourced--daemon)
                                            'describeSource (list :source "found"))))
          (should (equal (plist-get description :queryParameters) '(:q "night"))))
        (datasourced-search "")
        (dst-wait (lambda () (equal (length (dst-lines)) 4)) "every book: no search")
        (datasourced-set-filter "so")
        (dst-wait (lambda () (equal (dst-trimmed-lines) '("4  Solaris"))) "filtered by so")
        (datasourced-set-filter "")
        (dst-wait (lambda () (equal (length (dst-lines)) 4)) "every book again")))))

(ert-deftest datasourced-filtered-source-shown-by-a-spec ()
  "A spec that shows a filtered source over a sectioned one has its headers.
Those of the sections with a row that passes: not the emptied ones."
  (dst-with-lists
    (let ((spec (dst-temp-spec "{\"title\": \"Mysteries\", \"sources\": [
  {\"name\": \"books\", \"kind\": \"paginated\", \"identityKey\": \"id\",
   \"remoteConfiguration\": {\"baseURL\": \"${baseURL}\"}, \"apiPath\": \"/v1/books\",
   \"keyPath\": \"books\", \"pageSize\": 4},
  {\"name\": \"byGenre\", \"kind\": \"sectioned\", \"source\": \"books\", \"sectioningKey\": \"genre\"},
  {\"name\": \"mysteries\", \"kind\": \"filtered\", \"source\": \"byGenre\",
   \"filter\": {\"keyPath\": \"genre\", \"op\": \"eq\", \"value\": \"mystery\"}}],
 \"columns\": [\"id\", \"title\"]}")))
      (with-current-buffer (datasourced-open spec)
        (dst-wait (lambda () (equal (dst-trimmed-lines)
                                    '("mystery" "2  Gaudy Night" "⋯ loading…")))
                  "the mysteries, in sections")))))

(ert-deftest datasourced-search-spec-checked ()
  "A spec's search member is checked; a list without one says how to add it."
  (dst-with-lists
    (let ((bad (dst-temp-spec "{\"name\": \"found\", \"kind\": \"remote\",
  \"remoteConfiguration\": {\"baseURL\": \"${baseURL}\"}, \"apiPath\": \"/v1/search\",
  \"search\": {\"parameter\": \"q\", \"debounce\": 100}}")))
      (should (string-match-p "search.debounce\" is not a member"
                              (cadr (should-error (datasourced-open bad) :type 'user-error)))))
    (with-current-buffer (datasourced-open (dst-spec "books.json"))
      (dst-status "loaded 4")
      (should (string-match-p "names no search parameter"
                              (cadr (should-error (datasourced-search "dune") :type 'user-error)))))))

;;;; GraphQL lists

(defun dst-words ()
  "The list's lines, each split into its words."
  (mapcar #'split-string (dst-lines)))

(ert-deftest datasourced-graphql-spec-opens-and-searches-its-variable ()
  "Clients/specs/graphql-books.json shows the connection's first page (its
edges' nodes); `datasourced-search' sets the spec's search variable of the
GraphQL query (updateSource's graphql.variables), as typed."
  (dst-with-lists
    (let ((datasourced-variables (list (cons "baseURL" (dst-graphql)))))
      (with-current-buffer (datasourced-open (expand-file-name "Clients/specs/graphql-books.json" dst-repo))
        (dst-wait (lambda () (equal (seq-take (dst-words) 4)
                                    '(("0" "Book" "0" "fantasy") ("1" "Book" "1" "history")
                                      ("2" "Book" "2" "mystery") ("3" "Book" "3" "poetry"))))
                  "the first page of the connection")
        (datasourced-search "999")
        (dst-wait (lambda () (equal (dst-words) '(("999" "Book" "999" "science")))) "the answer to search: 999")
        (let ((description (jsonrpc-request (datasourced--daemon-connection datasourced--daemon)
                                            'describeSource (list :source "graphqlBooks"))))
          (should (equal (plist-get (plist-get description :graphql) :variables) '(:search "999"))))
        (dst-keys "s C-a C-k b o o k SPC 1 2 RET")
        (dst-wait (lambda () (equal (seq-take (dst-words) 4)
                                    '(("12" "Book" "12" "mystery") ("120" "Book" "120" "fantasy")
                                      ("121" "Book" "121" "history") ("122" "Book" "122" "mystery"))))
                  "the first page of the answer to search: book 12")
        (datasourced-search "")
        (dst-wait (lambda () (equal (car (dst-words)) '("0" "Book" "0" "fantasy"))) "every book: no search")
        (let ((description (jsonrpc-request (datasourced--daemon-connection datasourced--daemon)
                                            'describeSource (list :source "graphqlBooks"))))
          (should (null (plist-get (plist-get description :graphql) :variables))))))))

;;;; Lists asked for with a POST body

(defun dst-search-docs ()
  "The search's documents in the spec's sort, as (ID . YEAR).
Years ascend, then ids: year = 1950 + id % 50, as Tests/Frameworks/postapis.py has it."
  (sort (mapcar (lambda (n) (cons n (+ 1950 (% n 50)))) (number-sequence 0 999))
        (lambda (a b) (or (< (cdr a) (cdr b)) (and (= (cdr a) (cdr b)) (< (car a) (car b)))))))

(defun dst-search-words (docs)
  "DOCS as `dst-words' shows their rows."
  (mapcar (lambda (doc) (list (number-to-string (car doc)) "Book" (number-to-string (car doc))
                              (number-to-string (cdr doc))))
          docs))

(ert-deftest datasourced-post-body-spec-pages-after-the-last-rows-sort-values ()
  "Clients/specs/search-books.json, asked for with POST and a JSON body, shows
the first page of hits; M-> loads the next page, which the server starts after
the last row's sort values (search_after)."
  (dst-with-lists
    (let ((datasourced-variables (list (cons "baseURL" (dst-search))))
          (docs (dst-search-docs)))
      (with-current-buffer (datasourced-open (expand-file-name "Clients/specs/search-books.json" dst-repo))
        (should (equal (buffer-name) "*datasourced: Search books*"))
        (dst-status "loaded 4")
        (should (equal (dst-words) (append (dst-search-words (seq-take docs 4)) '(("⋯" "loading…")))))
        (let* ((connection (datasourced--daemon-connection datasourced--daemon))
               (last (jsonrpc-request connection 'objectAtIndexPath (list :source "searchBooks" :indexPath [0 3])))
               (next-page (plist-get (jsonrpc-request connection 'describeSource (list :source "searchBooks"))
                                     :nextPage)))
          ;; The mapping keeps sort, from which the cursor is taken.
          (should (equal (plist-get last :sort) (vector (cdr (nth 3 docs)) (car (nth 3 docs)))))
          (should (equal (json-parse-string (plist-get next-page :cursor)) (plist-get last :sort))))
        (goto-char (point-min))
        (dst-keys "M->")
        (dst-status "loaded 8")
        ;; The server answers search_after with the documents that sort after it.
        (should (equal (dst-words) (append (dst-search-words (seq-take docs 8)) '(("⋯" "loading…")))))))))

;;;; Credentials: asked before one is sent

(defconst dst-token "DATASOURCED_TEST_TOKEN")
(defconst dst-secret "s3cret-token")

(defun dst-daemon-with-token (home)
  "A daemon command line: the token in its environment, HOME its config folder.
Its allowances are recorded there, never among the user's."
  (list "env" (concat dst-token "=" dst-secret) (concat "XDG_CONFIG_HOME=" home) dst-daemon))

(defun dst-echo-spec (name)
  "A spec of one remote source NAME whose one row is the headers it sent."
  (dst-temp-spec (format "{\"title\": \"%s\", \"columns\": [\"authorization\"], \"sources\": [
  {\"name\": \"%s\", \"kind\": \"remote\", \"apiPath\": \"/_echo/headers\",
   \"remoteConfiguration\": {\"baseURL\": \"${baseURL}\",
     \"headers\": {\"Authorization\": {\"env\": \"%s\", \"prefix\": \"Bearer \"}}}}]}"
                         name name dst-token)))

(defun dst-allowances (home)
  "The allowances file of a daemon whose config folder is HOME."
  (expand-file-name "datasourced/allowed-credentials.json" home))

(defun dst-question ()
  "The question about the test token and the fixture API."
  (format "Allow the daemon to send the environment variable %s to %s? " dst-token (dst-fixtures)))

(defun dst-sent-p ()
  "Whether the list shows the headers sent with the token."
  (equal (dst-trimmed-lines) (list (concat "Bearer " dst-secret))))

(ert-deftest datasourced-credential-asked-and-allowed ()
  "A list that needs a credential asks; a yes allows it and the list loads."
  (dst-with-lists
    (let* ((home (make-temp-file "datasourced-config" t))
           (datasourced-command (dst-daemon-with-token home))
           (asked nil))
      (cl-letf (((symbol-function 'y-or-n-p) (lambda (question) (push question asked) t)))
        (with-current-buffer (datasourced-open (dst-echo-spec "echoYes"))
          (dst-wait #'dst-sent-p "the row: the headers sent, the token among them")
          (dst-status "loaded 1")))
      (should (equal asked (list (dst-question))))
      (should (member (format "datasourced: allowed the environment variable %s to be sent to %s (recorded in %s)"
                              dst-token (dst-fixtures) (dst-allowances home))
                      dst-messages))
      (should (file-exists-p (dst-allowances home)))
      (should-not (string-match-p dst-secret (with-temp-buffer
                                               (insert-file-contents (dst-allowances home))
                                               (buffer-string))))
      (should-not (cl-some (lambda (m) (string-match-p "credentialNotAllowed\\|was not sent" m)) dst-messages)))))

(ert-deftest datasourced-credential-declined-then-asked-again ()
  "A no leaves the failure and records nothing; g (refresh) asks again."
  (dst-with-lists
    (let* ((home (make-temp-file "datasourced-config" t))
           (datasourced-command (dst-daemon-with-token home))
           (answer nil)
           (asked nil))
      (cl-letf (((symbol-function 'y-or-n-p) (lambda (question) (push question asked) answer)))
        (with-current-buffer (datasourced-open (dst-echo-spec "echoNo"))
          (dst-wait (lambda () (member (format "datasourced: the environment variable %s not sent to %s: not allowed (g asks again)"
                                               dst-token (dst-fixtures))
                                       dst-messages))
                    "the no, said")
          (dst-wait (lambda () (string-prefix-p "error: " datasourced-status)) "the status says the load failed")
          (should (equal (plist-get datasourced-last-error :kind) "credentialNotAllowed"))
          (should-not (file-exists-p (dst-allowances home)))
          (should (equal (length asked) 1))
          (setq answer t)
          (dst-keys "g")
          (dst-wait #'dst-sent-p "the row after the yes")))
      (should (equal asked (list (dst-question) (dst-question)))))))

(ert-deftest datasourced-credential-asked-once-for-two-lists ()
  "Two lists waiting on one credential ask once, and both load after the yes."
  (dst-with-lists
    (let* ((datasourced-command (dst-daemon-with-token (make-temp-file "datasourced-config" t)))
           (asked nil))
      (cl-letf (((symbol-function 'y-or-n-p) (lambda (question) (push question asked) t)))
        (let ((first (datasourced-open (dst-echo-spec "echoFirst")))
              (second (datasourced-open (dst-echo-spec "echoSecond"))))
          (with-current-buffer first (dst-wait #'dst-sent-p "the first list"))
          (with-current-buffer second (dst-wait #'dst-sent-p "the second list"))))
      (should (equal asked (list (dst-question)))))))

(ert-deftest datasourced-credential-requests-from-a-failure ()
  "The question comes from the failure, a multi source's children included."
  (let* ((lacked '(:kind "credentialNotAllowed" :message "m" :credential (:file "~/.config/x/token")
                   :origin "https://api.example.com:8443"))
         (requests (datasourced-credential-requests
                    (list :kind "children" :message "m"
                          :failures (vector (list :source "a" :error lacked) (list :source "b" :error lacked)
                                            '(:source "c" :error (:kind "http" :message "HTTP status 500")))))))
    (should (equal (length requests) 1))
    (should (equal (datasourced-credential-question (car requests))
                   "Allow the daemon to send the file ~/.config/x/token to https://api.example.com:8443? "))
    (should-not (datasourced-credential-requests '(:kind "http" :message "HTTP status 500")))))

(ert-deftest datasourced-credential-real-question-answered-on-stdin ()
  "`y-or-n-p' itself, in another Emacs that reads the answer from its stdin.
The question is printed, \"y\" answers it, and the row shows the token sent."
  (let* ((home (make-temp-file "datasourced-config" t))
         (spec (dst-echo-spec "echoAsked"))
         (program
          `(progn
             (require 'datasourced)
             (setq datasourced-command ',(dst-daemon-with-token home)
                   datasourced-variables '(("baseURL" . ,(dst-fixtures))))
             (let ((deadline (+ (float-time) ,dst-timeout)))
               (with-current-buffer (datasourced-open ,spec)
                 (while (and (not (string-match-p "Bearer" (buffer-string))) (< (float-time) deadline))
                   (accept-process-output nil 0.02))
                 (princ (format "rows: %s\n" (string-trim (buffer-string))))))
             (datasourced-stop-all)))
         (output (with-temp-buffer
                   (insert "y\n")
                   (call-process-region (point-min) (point-max) (expand-file-name invocation-name invocation-directory)
                                        t t nil "--batch" "-Q" "-L" (expand-file-name ".." dst-here)
                                        "--eval" (prin1-to-string program))
                   (buffer-string))))
    (should (string-match-p (regexp-quote (dst-question)) output))
    (should (string-match-p (regexp-quote (concat "rows: Bearer " dst-secret)) output))
    (should (file-exists-p (dst-allowances home)))))

;;;; Autoloads: every command before datasourced.el is loaded

(defun dst-commands ()
  "The commands datasourced.el defines, sorted by name."
  (let ((commands nil))
    (mapatoms (lambda (symbol)
                (when (and (commandp symbol)
                           (string-prefix-p "datasourced-" (symbol-name symbol))
                           (equal (file-name-base (or (symbol-file symbol 'defun) "")) "datasourced"))
                  (push symbol commands))))
    (sort commands (lambda (a b) (string< a b)))))

;;;; Actions (Clients/specs/books.json's "books": edit, delete, add)

(defvar dst-answers nil "The answers the mocked prompts give, in turn.")
(defvar dst-prompts nil "What the mocked prompts asked, latest first.")

(defmacro dst-answering (answers &rest body)
  "Runs BODY with `read-string' and `completing-read' answering ANSWERS in turn."
  (declare (indent 1) (debug t))
  `(let ((dst-answers ,answers) (dst-prompts nil))
     (cl-letf (((symbol-function 'read-string)
                (lambda (prompt &optional initial &rest _)
                  (push (list prompt initial) dst-prompts)
                  (or (pop dst-answers) (signal 'quit nil))))
               ((symbol-function 'completing-read)
                (lambda (prompt collection &rest _)
                  (push (list prompt (all-completions "" collection)) dst-prompts)
                  (or (pop dst-answers) (signal 'quit nil)))))
       ,@body)))

(defun dst-goto-row (text)
  "Moves point to the row whose line, trimmed, is TEXT."
  (goto-char (point-min))
  (while (and (not (eobp)) (not (equal (string-trim (buffer-substring (line-beginning-position) (line-end-position))) text)))
    (forward-line 1))
  (should-not (eobp)))

(defun dst-queue-ariels-edit ()
  "Edits Ariel to Ariel II: the fixture API answers 503 (Retry-After), so it is queued.
Waits for the queued message and the row marked as pending."
  (dst-goto-row "3    Ariel              1956")
  (dst-answering '("Ariel II")
    (datasourced-action "edit"))
  (dst-wait (lambda () (member "datasourced: books: edit not sent yet, to be sent again: Down for maintenance."
                               dst-messages))
            "the queued mutation's message")
  (dst-wait (lambda () (member "3    Ariel II           1956  ⋯ pending" (dst-trimmed-lines)))
            "Ariel II, marked"))

(defun dst-settled ()
  "Waits until the list has no mutation pending."
  (dst-wait (lambda () (null datasourced--mutations)) "every mutation to settle"))

(defconst dst-page1-edited
  '("science fiction" "1    Dune Messiah       1950" "4    Solaris            1959"
    "mystery" "2    Gaudy Night        1953"
    "poetry" "3    Ariel              1956" "⋯ loading…"))

(ert-deftest datasourced-actions-edit-rollback-add-delete ()
  "The books' actions on the byGenre list, performed on the source \"books\".
An edit of id 1 is committed; an edit of id 2 to \"\" is rolled back with
the server's words; a wrong integer sends nothing; add inserts Beloved
\(id 99), delete removes id 3 and its section."
  (dst-with-lists
    (with-current-buffer (datasourced-open (dst-spec "books.json"))
      (dst-status "loaded 4")
      (dst-wait (lambda () datasourced--actions) "the source's actions")
      (should (equal datasourced--action-source "books"))
      (should (equal (datasourced--action-names) '("add" "delete" "edit")))
      ;; Edit of id 1, committed.
      (dst-goto-row "1    Dune               1950")
      (dst-answering '("edit" "Dune Messiah")
        (call-interactively #'datasourced-action)
        (should (equal (reverse dst-prompts)
                       '(("Action: " ("add" "delete" "edit")) ("edit title (string): " "Dune")))))
      (dst-settled)
      (dst-wait (lambda () (equal (dst-trimmed-lines) dst-page1-edited)) "Dune Messiah")
      (dst-goto-row "1    Dune Messiah       1950")
      (should-not (text-property-any (line-beginning-position) (line-end-position) 'face 'datasourced-pending))
      ;; Edit of id 2 to "", rolled back.
      (dst-goto-row "2    Gaudy Night        1953")
      (dst-answering '("")
        (datasourced-action "edit"))
      (dst-wait (lambda () (member "datasourced: books: edit rolled back: title: This field may not be blank."
                                   dst-messages))
                "the rollback's message")
      (dst-settled)
      (should (equal (dst-trimmed-lines) dst-page1-edited))
      ;; A wrong integer: nothing sent.
      (setq dst-requests nil)
      (dst-answering '("Beloved" "fiction" "nineteen")
        (should (equal (cadr (should-error (datasourced-action "add") :type 'user-error))
                       "add not sent: year must be an integer (got \"nineteen\")"))
        (should (equal (mapcar #'car (reverse dst-prompts))
                       '("add title (string): " "add genre (string, optional): " "add year (integer, optional): "))))
      (should-not (memq 'performAction dst-requests))
      ;; Add of Beloved, committed as id 99.
      (dst-answering '("Beloved" "fiction" "1987")
        (datasourced-action "add"))
      (dst-settled)
      (dst-wait (lambda () (equal (dst-trimmed-lines)
                                  (append '("fiction" "99   Beloved            1987") dst-page1-edited)))
                "Beloved, id 99")
      ;; Delete of id 3: its row and its section go.
      (dst-goto-row "3    Ariel              1956")
      (dst-answering nil
        (datasourced-action "delete"))
      (dst-settled)
      (dst-wait (lambda () (equal (dst-trimmed-lines)
                                  (append '("fiction" "99   Beloved            1987")
                                          (butlast dst-page1-edited 3) '("⋯ loading…"))))
                "Ariel gone")
      (should-not (cl-some (lambda (m) (string-match-p "rolled back\\|failed" m))
                           (cdr (member "datasourced: books: edit rolled back: title: This field may not be blank."
                                        (reverse dst-messages))))))))

(ert-deftest datasourced-actions-queued-edit-stays-pending ()
  "A queued edit (503, Retry-After) stays shown, dim and marked as pending.
Another list opened over the same sources marks it too, from describeSource's
pendingMutations."
  (dst-with-lists
    (with-current-buffer (datasourced-open (dst-spec "books.json"))
      (dst-status "loaded 4")
      (dst-wait (lambda () datasourced--actions) "the source's actions")
      (dst-queue-ariels-edit)
      (should (equal (dst-trimmed-lines)
                     '("science fiction" "1    Dune               1950" "4    Solaris            1959"
                       "mystery" "2    Gaudy Night        1953"
                       "poetry" "3    Ariel II           1956  ⋯ pending" "⋯ loading…")))
      (should (= 1 (length datasourced--mutations)))
      (dst-goto-row "3    Ariel II           1956  ⋯ pending")
      (should (eq (get-text-property (1+ (line-beginning-position)) 'face) 'datasourced-pending))
      (should (eq (get-text-property (- (line-end-position) 2) 'face) 'datasourced-pending))
      (should (equal (face-attribute 'datasourced-pending :inherit) 'shadow))
      ;; Another list over the same sources marks the row still pending
      ;; (describeSource's pendingMutations).
      (let ((spec (dst-temp-spec (replace-regexp-in-string
                                  "Books by genre" "Books again"
                                  (with-temp-buffer (insert-file-contents (dst-spec "books.json"))
                                                    (buffer-string))))))
        (with-current-buffer (datasourced-open spec)
          (should (equal (buffer-name) "*datasourced: Books again*"))
          (dst-wait (lambda () (= 1 (length datasourced--mutations))) "the pending mutation known")
          (dst-wait (lambda () (member "3    Ariel II           1956  ⋯ pending" (dst-trimmed-lines)))
                    "the row, marked in the other list")
          (delete-file spec))))))

;; What `datasourced-cancel-action' sends and what the daemon settles, in order.
(defvar dst-cancels nil "The params of the cancelMutation requests sent, latest first.")
(defvar dst-settles nil "The didSettleMutation params received, latest first.")

(defun dst-record-cancel (daemon method params &rest _)
  "Records PARAMS when METHOD, sent to DAEMON, is cancelMutation."
  (ignore daemon)
  (when (eq method 'cancelMutation)
    (push params dst-cancels)))

(defun dst-record-settle (daemon params)
  "Records the didSettleMutation PARAMS from DAEMON."
  (ignore daemon)
  (push params dst-settles))

(ert-deftest datasourced-actions-cancel-action ()
  "`datasourced-cancel-action' undoes the row's actions the server has not taken.
On a row with none pending, or off a row, it says so and sends nothing.
Ariel's edit is queued (503, sent again in an hour); a second edit of
Ariel and one of Dune wait behind it.  Cancelled on Ariel's row, its two
edits go, the newest first, and Ariel is as before; Dune's edit is then
sent, and committed."
  (dst-with-lists
    (let ((dst-cancels nil) (dst-settles nil))
      (advice-add 'datasourced--request :before #'dst-record-cancel)
      (advice-add 'datasourced--on-settle :before #'dst-record-settle)
      (unwind-protect
          (with-current-buffer (datasourced-open (dst-spec "books.json"))
            (dst-status "loaded 4")
            (dst-wait (lambda () datasourced--actions) "the source's actions")
            (should (commandp #'datasourced-cancel-action))
            ;; Nothing pending on the row, or no row: said, nothing sent.
            (dst-goto-row "3    Ariel              1956")
            (should (equal (cadr (should-error (datasourced-cancel-action) :type 'user-error))
                           "byGenre: no pending action on this row: nothing to cancel"))
            (dst-goto-row "poetry")
            (should (equal (cadr (should-error (datasourced-cancel-action) :type 'user-error))
                           "byGenre: move point to a row with a pending action to cancel it"))
            (dst-ping)
            (should-not dst-cancels)
            ;; Ariel's edit queued, then two edits waiting behind it.
            (dst-queue-ariels-edit)
            (dst-goto-row "3    Ariel II           1956  ⋯ pending")
            (dst-answering '("Ariel III")
              (datasourced-action "edit"))
            (dst-goto-row "1    Dune               1950")
            (dst-answering '("Dune Messiah")
              (datasourced-action "edit"))
            (dst-wait (lambda () (= 3 (length datasourced--mutations))) "three mutations pending")
            (let* ((made (reverse (mapcar #'car datasourced--mutations)))
                   (description (jsonrpc-request (datasourced--daemon-connection datasourced--daemon)
                                                 'describeSource (list :source "books"))))
              (should (equal (mapcar (lambda (m) (list (plist-get m :mutation) (plist-get m :status)))
                                     (plist-get description :pendingMutations))
                             (cl-mapcar #'list made '("queued" "waiting" "waiting"))))
              (dst-wait (lambda () (equal (dst-trimmed-lines)
                                          '("science fiction" "1    Dune Messiah       1950  ⋯ pending"
                                            "4    Solaris            1959" "mystery" "2    Gaudy Night        1953"
                                            "poetry" "3    Ariel III          1956  ⋯ pending" "⋯ loading…")))
                        "both edits shown, marked")
              ;; Cancelled on Ariel's row: the newest first (else the daemon would
              ;; send the second as the first went).
              (setq dst-messages nil)
              (dst-goto-row "3    Ariel III          1956  ⋯ pending")
              (datasourced-cancel-action)
              (dst-wait (lambda () (= 4 (length dst-settles))) "every mutation settled")
              (should (equal (reverse dst-cancels)
                             (list (list :source "books" :mutation (nth 1 made))
                                   (list :source "books" :mutation (nth 0 made)))))
              (should (equal (mapcar (lambda (p) (list (plist-get p :mutation) (plist-get p :status)
                                                       (plist-get (plist-get p :error) :kind)))
                                     (cdr (reverse dst-settles)))
                             (list (list (nth 1 made) "rolledBack" "cancelled")
                                   (list (nth 0 made) "rolledBack" "cancelled")
                                   (list (nth 2 made) "committed" nil)))))
            (dst-settled)
            (dst-wait (lambda () (equal (dst-trimmed-lines) dst-page1-edited))
                      "Ariel as before its edits, Dune's edit kept")
            (should (equal (cl-remove-if-not (lambda (m) (string-prefix-p "datasourced:" m)) (reverse dst-messages))
                           '("datasourced: books: edit cancelled, its change undone"
                             "datasourced: books: edit cancelled, its change undone"))))
        (advice-remove 'datasourced--request #'dst-record-cancel)
        (advice-remove 'datasourced--on-settle #'dst-record-settle)))))

(ert-deftest datasourced-actions-values-parsed ()
  "Typed values are read as their declared types."
  (should (equal (datasourced-parse-value "1987" "integer") '(1987)))
  (should (equal (datasourced-parse-value "19.5" "integer") "an integer"))
  (should (equal (datasourced-parse-value "-2.5e1" "number") '(-25.0)))
  (should (equal (datasourced-parse-value "yes" "boolean") '(t)))
  (should (equal (datasourced-parse-value "false" "boolean") '(:json-false)))
  (should (equal (datasourced-parse-value "maybe" "boolean") "true or false"))
  (should (equal (datasourced-parse-value "[1]" "object") "a JSON object"))
  (should (equal (datasourced-parse-value " x " "string") '(" x "))))

(ert-deftest datasourced-commands-autoloaded ()
  "Every command is an autoload, which works before datasourced.el is loaded.
The autoloads are made from datasourced.el's cookies as package.el makes
them, in a temporary folder; another Emacs loads them alone.  There every
command is an interactive autoload, `datasourced-search' outside a list
says it is not one (it loads the package), and `datasourced-health'
reports the daemon and a round trip."
  (require 'package)
  (let* ((commands (dst-commands))
         (dir (make-temp-file "datasourced-autoloads" t))
         (autoloads (expand-file-name "datasourced-autoloads.el" dir)))
    (unwind-protect
        (progn
          ;; The commands are read from the loaded package, so a new one is checked too.
          (dolist (command '(datasourced-open datasourced-search datasourced-health datasourced-refresh))
            (should (memq command commands)))
          (copy-file (expand-file-name "../datasourced.el" dst-here) (expand-file-name "datasourced.el" dir))
          (package-generate-autoloads "datasourced" dir)
          (let* ((program
                  `(progn
                     (load ,autoloads nil t)
                     (let ((before (mapcar (lambda (command)
                                             (list command (autoloadp (symbol-function command)) (commandp command)))
                                           ',commands))
                           (loaded (featurep 'datasourced))
                           (search (condition-case failure
                                       (progn (call-interactively 'datasourced-search) 'no-error)
                                     (error failure))))
                       (setq datasourced-command (list ,dst-daemon))
                       (let ((health (condition-case failure
                                         (with-current-buffer (call-interactively 'datasourced-health)
                                           (buffer-string))
                                       (error (format "%S" failure)))))
                         (when (fboundp 'datasourced-stop-all)
                           (datasourced-stop-all))
                         (princ (format "RESULT %S\n" (list :before before :loaded-before loaded
                                                            :search search :health health)))))))
                 (output (with-temp-buffer
                           (call-process (expand-file-name invocation-name invocation-directory) nil t nil
                                         "--batch" "-Q" "-L" (expand-file-name ".." dst-here)
                                         "--eval" (prin1-to-string program))
                           (buffer-string)))
                 (result (and (string-match "^RESULT " output)
                              (read (substring output (match-end 0))))))
            (unless result
              (ert-fail (list "the other Emacs said no RESULT" output)))
            (should (equal (plist-get result :before) (mapcar (lambda (command) (list command t t)) commands)))
            (should-not (plist-get result :loaded-before))
            (should (equal (plist-get result :search) '(user-error "This buffer is not a datasourced list")))
            (should (string-match-p "^OK datasourced .*, protocol 1\\.[0-9]" (plist-get result :health)))
            (should (string-match-p "^OK a round trip takes" (plist-get result :health)))))
      (delete-directory dir t))))

(provide 'datasourced-tests)
;;; datasourced-tests.el ends here
