;;; timing-session.el --- The session of tests/timing.sh: a real Emacs in tmux  -*- lexical-binding: t; -*-

;;; Commentary:

;; Loaded by tests/timing.sh into `emacs -nw -Q' in a tmux pane, on the fixture API
;; whose base URL is $DATASOURCED_BASE_URL.  It starts the daemon and waits for its
;; answer (so that the daemon's start is not timed), writes Emacs's process id to
;; $DATASOURCED_TIMING_PID (for its memory), then says "timing: ready" in the echo
;; area.  The script then types `M-: (datasourced-timing "million")' (or "hundred"):
;;   million  /v1/million, 1,000,000 rows of counted placeholders, pages of 100;
;;   hundred  the same API's first page alone: 100 rows (paginated, no counted
;;            placeholders: a trailing loading row, the next page loads near it).
;; Both show the columns id and title, so the screens differ only by what is counted.
;;
;; The daemon's share of an open is written to $DATASOURCED_TIMING_MARKS as "KIND
;; MILLISECONDS": from the open to the change set that brings the rows (the first to
;; insert more than one row), and, when that change set has no values (a million rows:
;; the list reads those on screen), the waits for the answers to the requests that
;; follow it up to the first read of rows (describeSource, objectsInSection).

;;; Code:

(require 'datasourced)

(setq datasourced-command (list (getenv "DATASOURCED"))
      datasourced-variables (list (cons "baseURL" (getenv "DATASOURCED_BASE_URL"))))

(let ((pid-file (getenv "DATASOURCED_TIMING_PID")))
  (when pid-file
    (with-temp-file pid-file (insert (number-to-string (emacs-pid))))))

(defvar datasourced-timing--opened nil "Source name -> `float-time' of its open.")
(defvar datasourced-timing--waited nil
  "Source name -> milliseconds of the daemon's so far, while its first read is awaited.")

(defun datasourced-timing--mark (source ms)
  "Write the daemon's share MS of the open of SOURCE to the marks file."
  (let ((file (getenv "DATASOURCED_TIMING_MARKS")))
    (when file
      (write-region (format "%s %d\n" source (round ms)) nil file t 'silent))))

(defun datasourced-timing--on-change (fn params)
  "Note when the change set PARAMS that brings the rows comes; then call FN."
  (let* ((source datasourced--source)
         (inserted (datasourced--rows-named (plist-get (plist-get params :changes) :inserted)))
         (started (and (> inserted 1) (alist-get source datasourced-timing--opened nil nil #'equal))))
    (when started
      (setf (alist-get source datasourced-timing--opened nil t #'equal) nil)
      (let ((ms (* 1000 (- (float-time) started))))
        (if (plist-get params :values)
            (datasourced-timing--mark source ms)
          (setf (alist-get source datasourced-timing--waited nil nil #'equal) ms)))))
  (funcall fn params))

(defun datasourced-timing--request (fn daemon method params &optional on-result on-error)
  "Time the answer to METHOD while the first read of its source is awaited.
FN sends METHOD with PARAMS to DAEMON; ON-RESULT and ON-ERROR as it has them."
  (let ((source (plist-get params :source)))
    (when (and on-result (memq method '(describeSource objectsInSection))
               (alist-get source datasourced-timing--waited nil nil #'equal))
      (let ((asked (float-time)) (answered on-result))
        (setq on-result
              (lambda (result)
                (let ((waited (alist-get source datasourced-timing--waited nil nil #'equal)))
                  (when waited
                    (setq waited (+ waited (* 1000 (- (float-time) asked))))
                    (if (eq method 'objectsInSection)
                        (progn
                          (setf (alist-get source datasourced-timing--waited nil t #'equal) nil)
                          (datasourced-timing--mark source waited))
                      (setf (alist-get source datasourced-timing--waited nil nil #'equal) waited))))
                (funcall answered result)))))
    (funcall fn daemon method params on-result on-error)))

(advice-add 'datasourced--on-change :around #'datasourced-timing--on-change)
(advice-add 'datasourced--request :around #'datasourced-timing--request)

(defconst datasourced-timing--folder (make-temp-file "datasourced-timing" t))

(defun datasourced-timing--spec (kind)
  "The spec file of KIND (\"million\" or \"hundred\")."
  (let ((file (expand-file-name (concat kind ".json") datasourced-timing--folder)))
    (unless (file-exists-p file)
      (with-temp-file file
        (insert (json-encode
                 `((title . ,kind) (name . ,kind) (kind . "paginated")
                   (remoteConfiguration . ((baseURL . "${baseURL}")))
                   (apiPath . "/v1/million") (keyPath . "rows") (pageSize . 100)
                   (identityKey . "id")
                   ,@(and (equal kind "million") '((placeholders . "counted") (jumpThreshold . 300)))
                   (columns . [((key . "id") (width . 8)) "title"]))))))
    file))

(defun datasourced-timing (kind)
  "Open the list KIND (\"million\" or \"hundred\"), noting when."
  (let ((spec (datasourced-timing--spec kind)))
    (setf (alist-get kind datasourced-timing--opened nil nil #'equal) (float-time))
    (datasourced-open spec)))

(let ((daemon (datasourced--daemon-for datasourced-command)))
  (if (stringp daemon)
      (message "timing: no daemon: %s" daemon)
    (datasourced--request daemon 'ping nil (lambda (_) (message "timing: ready")))))

;;; timing-session.el ends here
