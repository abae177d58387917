# dovecot-lib.sh — a throwaway Dovecot IMAP server on 127.0.0.1 for the intake tests
# (issue 13), sourced after lib.sh. Everything lives under $T/dovecot: the config, a
# passwd-file with one user, the user's Maildir, the logs. The server runs in the
# foreground (-F) as our child; its pid is recorded and only that pid is stopped.
# Without Dovecot the test is skipped — a failure under CI=true (lib.sh's skip).

DOVECOT_BIN=${DOVECOT_BIN:-/usr/sbin/dovecot}
IMAP_USER=triage
# A password nobody would type: the tests grep for it everywhere but its file.
IMAP_PASS="planted-$(od -An -N8 -tx8 /dev/urandom | tr -d ' ')-secret"

# free_port: a TCP port on 127.0.0.1 that nothing listens on right now.
free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# start_dovecot: starts the server; sets IMAP_PORT, IMAP_URL (INBOX), MAILDIR, and
# $T/imap.secret (the password, mode 0600).
start_dovecot() {
	[ -x "$DOVECOT_BIN" ] || skip "dovecot is not installed (scripts/deps installs dovecot-imapd)"
	D="$T/dovecot"
	mkdir -p "$D/run" "$D/state" "$D/home"
	MAILDIR="$D/home/$IMAP_USER/Maildir"
	mkdir -p "$MAILDIR/new" "$MAILDIR/cur" "$MAILDIR/tmp"
	if [ "$(id -u)" -eq 0 ]; then
		# mail is never accessed as root: the user's files belong to nobody
		mail_uid=$(id -u nobody); mail_gid=$(id -g nobody)
		login_user=dovenull; internal_user=dovecot
		id dovenull >/dev/null 2>&1 || login_user=nobody
		id dovecot >/dev/null 2>&1 || internal_user=nobody
		# the passwd-file stays 0600 root: auth reads it as root; the mail process
		# (nobody) only needs to pass through the test directory
		auth_user=root
		chmod 711 "$T" "$D"
	else
		mail_uid=$(id -u); mail_gid=$(id -g)
		login_user=$(id -un); internal_user=$(id -un); auth_user=$(id -un)
	fi
	IMAP_PORT=$(free_port)
	printf '%s\n' "$IMAP_PASS" >"$T/imap.secret"
	chmod 600 "$T/imap.secret"
	printf '%s:{PLAIN}%s:%s:%s::%s/home/%s\n' "$IMAP_USER" "$IMAP_PASS" "$mail_uid" \
		"$mail_gid" "$D" "$IMAP_USER" >"$D/passwd"
	chmod 600 "$D/passwd"
	cat >"$D/dovecot.conf" <<CONF
base_dir = $D/run
state_dir = $D/state
log_path = $D/dovecot.log
protocols = imap
listen = 127.0.0.1
ssl = no
disable_plaintext_auth = no
auth_mechanisms = plain login
default_login_user = $login_user
default_internal_user = $internal_user
first_valid_uid = 1
mail_max_userip_connections = 50
# A refused login (t_intake_secret's wrong password, polled again and again) costs no
# time: no failure delay (2 s by default), and no per-IP penalty (anvil's, switched off
# as Dovecot's documentation says), which otherwise delays every later login from
# 127.0.0.1, the good source's polls and the handlers' own checks too, by 2 s to 15 s
auth_failure_delay = 0
mail_location = maildir:~/Maildir
passdb {
  driver = passwd-file
  args = scheme=PLAIN username_format=%u $D/passwd
}
userdb {
  driver = passwd-file
  args = username_format=%u $D/passwd
}
service imap-login {
  inet_listener imap {
    address = 127.0.0.1
    port = $IMAP_PORT
  }
  inet_listener imaps {
    port = 0
  }
}
service auth {
  user = $auth_user
}
service auth-worker {
  user = $auth_user
}
service anvil {
  unix_listener anvil-auth-penalty {
    mode = 0
  }
}
service pop3-login {
  inet_listener pop3 {
    port = 0
  }
}
service submission-login {
  inet_listener submission {
    port = 0
  }
}
CONF
	[ "$(id -u)" -eq 0 ] && chown -R "$mail_uid:$mail_gid" "$D/home"
	"$DOVECOT_BIN" -F -c "$D/dovecot.conf" >"$D/stdout.log" 2>&1 &
	DOVECOT_PID=$!
	echo "$DOVECOT_PID" >"$D/pid"
	BG_PIDS="$BG_PIDS $DOVECOT_PID"
	IMAP_URL="imap://127.0.0.1:$IMAP_PORT/INBOX"
	end=$(( $(date +%s) + 20 ))
	until imap_cmd "NOOP" >/dev/null 2>&1; do
		if ! alive "$DOVECOT_PID" || [ "$(date +%s)" -ge "$end" ]; then
			cat "$D/stdout.log" "$D/dovecot.log" >&2 2>/dev/null || true
			skip "Dovecot did not start on 127.0.0.1:$IMAP_PORT"
		fi
		sleep 0.05
	done
}

stop_dovecot() {
	[ -n "${DOVECOT_PID:-}" ] || return 0
	kill -TERM "$DOVECOT_PID" 2>/dev/null || true
	wait "$DOVECOT_PID" 2>/dev/null || true
	DOVECOT_PID=""
}

# imap_cmd COMMAND: one IMAP command on INBOX through the curl CLI (an independent client),
# the password read from its file by curl (never on a command line).
imap_cmd() {
	printf 'user = "%s:%s"\n' "$IMAP_USER" "$(cat "$T/imap.secret")" >"$T/curl.netrc.cfg"
	chmod 600 "$T/curl.netrc.cfg"
	curl -s --max-time 20 -K "$T/curl.netrc.cfg" "$IMAP_URL" -X "$1"
}

# unseen_uids: the UIDs of INBOX without \Seen, space separated, sorted.
unseen_uids() { imap_cmd "UID SEARCH UNSEEN" | tr -d '\r' | sed -n 's/^\* SEARCH *//p' | tr ' ' '\n' | sed '/^$/d' | sort -n | tr '\n' ' ' | sed 's/ $//'; }
unseen_count() { imap_cmd "UID SEARCH UNSEEN" | tr -d '\r' | sed -n 's/^\* SEARCH *//p' | wc -w | tr -d ' '; }
seen_count() { imap_cmd "UID SEARCH SEEN" | tr -d '\r' | sed -n 's/^\* SEARCH *//p' | wc -w | tr -d ' '; }

# write_messages DIR FROM TO [SUBJECT]: messages FROM..TO into the Maildir DIR's new/
# (each through tmp/, as a delivery agent does), in one process: two per message cost
# seconds for t_intake_imap_many's 1,000. SUBJECT defaults to "message N".
write_messages() {
	python3 - "$1" "$2" "$3" "$$" "${4:-}" <<'PY'
import os, sys
d, first, last, pid, subject = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
for n in range(first, last + 1):
    name = "1700000000.M%dP%s.wakeq-test" % (n, pid)
    with open(os.path.join(d, "tmp", name), "w", newline="") as f:
        f.write("From: Sender %d <sender%d@example.org>\r\nTo: triage@example.org\r\n"
                "Subject: %s\r\nDate: Tue, 1 Dec 2026 00:00:00 +0000\r\n"
                "Message-ID: <m%d.%s@example.org>\r\n\r\nBody of message %d.\r\n"
                % (n, n, subject or "message %d" % n, n, pid, n))
    os.rename(os.path.join(d, "tmp", name), os.path.join(d, "new", name))
PY
}

# add_message DIR N [SUBJECT]: message N.
add_message() { write_messages "$1" "$2" "$2" "${3:-}"; }

# add_messages DIR FROM TO: messages FROM..TO, owned by the mail user.
add_messages() {
	write_messages "$1" "$2" "$3"
	if [ "$(id -u)" -eq 0 ] && [ -n "${mail_uid:-}" ]; then chown -R "$mail_uid:$mail_gid" "$1"; fi
}
