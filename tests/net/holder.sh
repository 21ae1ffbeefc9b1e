# The holder of a fake host (netns.sh): PID 1 of the host's PID namespace, in its own UTS, IPC and
# mount namespaces. It names the host, gives it a private /dev/shm and the fake network's
# /etc/hosts, says it is ready, then waits for EOF on stdin (the life pipe of netns.sh). When it
# exits, the kernel kills every process of the host's PID namespace.
# usage: bash holder.sh HOSTNAME HOSTS_FILE READY_FILE
set -u
hostname "$1" || exit 1
mount -t tmpfs -o mode=1777,size=1g weft-shm /dev/shm || exit 1
mount --bind "$2" /etc/hosts || exit 1
# The namespaces `ip netns` names are mounted under /run/netns: a host must neither see them nor
# keep them alive (its mount namespace holds copies of those mounts).
if grep -q ' /run/netns ' /proc/self/mountinfo; then umount -R -l /run/netns || exit 1; fi
: >"$3"
read -r _
