# SPDX-License-Identifier: LGPL-2.1-or-later
# Sourced by tests/e2e/build-image.sh, which hashes it into the image's cache key: where Debian comes
# from, and a debootstrap that survives a mirror's passing hiccup. Only "build-image.sh --fetch"
# (run by "make deps") downloads; nothing at test time does.

# The mirror apt on this machine already uses for SUITE main ($1): apt-cache policy first, then
# the one-line and deb822 source files; E2E_MIRROR overrides it.
apt_mirror() {
        local suite=$1 m
        if [ -n "${E2E_MIRROR:-}" ]; then
                echo "$E2E_MIRROR"
                return
        fi
        m=$(apt-cache policy 2>/dev/null | awk -v s="$suite/main" '$3 == s && $4 == "amd64" { print $2; exit }')
        [ -n "$m" ] || m=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
                awk -v s="$suite" '$1 == "deb" && $3 == s { print $2; exit }')
        [ -n "$m" ] || m=$(awk '/^URIs:/ { for (i = 2; i <= NF; i++) if ($i !~ /security/) { print $i; exit } }' \
                /etc/apt/sources.list.d/*.sources 2>/dev/null | head -n 1)
        echo "${m:-http://deb.debian.org/debian}"
}

# debootstrap_retry LOG SUITE TARGET MIRROR [DEBOOTSTRAP OPTIONS...]
# A cold CI run once failed on "Failed getting release file" while the mirror answered curl a
# minute later: a download failure is tried again, up to three times, 20 s then 60 s apart, from
# an empty TARGET. Any other failure (a broken package, a full disk) ends it at once. The log of
# the last attempt stays in LOG; its tail goes to stderr on failure.
debootstrap_retry() {
        local log=$1 suite=$2 target=$3 mirror=$4 attempt m
        shift 4
        for attempt in 1 2 3; do
                debootstrap "$@" "$suite" "$target" "$mirror" >"$log" 2>&1 && return 0
                grep -qE "Failed getting release file|Couldn't download|Failed to download|Temporary failure|Could not resolve|Connection (refused|timed out)|Read error|Unable to connect" "$log" ||
                        break
                [ "$attempt" -lt 3 ] || break
                echo "debootstrap: a download from $mirror failed (attempt $attempt of 3); trying again" >&2
                tail -n 3 "$log" >&2
                # A first-stage failure mounts nothing; be sure before removing the tree.
                findmnt -rn -o TARGET | grep -F "$target/" | sort -r | while read -r m; do umount -l "$m" || true; done
                rm -rf --one-file-system "$target"
                sleep $((attempt == 1 ? 20 : 60))
        done
        tail -n 30 "$log" >&2
        return 1
}
