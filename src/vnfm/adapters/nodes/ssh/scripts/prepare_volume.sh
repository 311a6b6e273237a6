#!/bin/bash
# Storage server: the block device of volume VOLUME_ID (or DEVICE) gets a FS_TYPE file system only
# when it has none (an existing one, and its data, is kept), is mounted at MOUNT_TO and has exactly
# one FSTAB entry for MOUNT_TO (by UUID, nofail) so it is mounted again after a reboot.
# Inputs: VOLUME_ID DEVICE (optional) FS_TYPE MOUNT_TO FSTAB DEADLINE_S (for the device to appear).
# Output: "@@ changed=true|false", "@@ device=...", "@@ formatted=true|false".
set -euo pipefail
: "${VOLUME_ID:?}" "${FS_TYPE:?}" "${MOUNT_TO:?}" "${FSTAB:?}" "${DEADLINE_S:?}"
DEVICE=${DEVICE:-}
changed=false
formatted=false
deadline=$((SECONDS + ${DEADLINE_S%.*}))
find_dev() {
  local p
  if [ -n "$DEVICE" ]; then
    if [ -b "$DEVICE" ] || [ -f "$DEVICE" ]; then readlink -f "$DEVICE"; return 0; fi
    return 1
  fi
  # Cinder volumes on virtio/virtio-scsi: the serial is the first 20 characters of the volume id
  for p in "/dev/disk/by-id/virtio-${VOLUME_ID:0:20}" "/dev/disk/by-id/scsi-0QEMU_QEMU_HARDDISK_${VOLUME_ID:0:20}" \
           "/dev/disk/by-id/scsi-0QEMU_QEMU_HARDDISK_${VOLUME_ID}" "/dev/disk/by-id/wwn-0x${VOLUME_ID//-/}"; do
    if [ -b "$p" ]; then readlink -f "$p"; return 0; fi
  done
  return 1
}
until dev=$(find_dev); do
  if [ "$SECONDS" -ge "$deadline" ]; then
    echo "no block device for volume $VOLUME_ID${DEVICE:+ ($DEVICE)} after ${DEADLINE_S}s: is it attached?" >&2
    exit 1
  fi
  sleep 0.5
done
fs=$(blkid -p -o value -s TYPE "$dev" 2>/dev/null || true)
if [ -z "$fs" ]; then
  if [ -n "$(blkid -p -o value -s PTTYPE "$dev" 2>/dev/null || true)" ]; then
    echo "$dev has a partition table but no file system: refusing to format it" >&2
    exit 1
  fi
  mkfs -t "$FS_TYPE" "$dev" >/dev/null
  formatted=true
  changed=true
  fs=$FS_TYPE
fi
uuid=$(blkid -o value -s UUID "$dev")
if [ -z "$uuid" ]; then
  echo "$dev ($fs) has no UUID" >&2
  exit 1
fi
mkdir -p "$MOUNT_TO"
line="UUID=$uuid $MOUNT_TO $fs defaults,nofail 0 2"
touch "$FSTAB"
current=$(awk -v m="$MOUNT_TO" '$1 !~ /^#/ && $2 == m' "$FSTAB")
if [ "$current" != "$line" ]; then
  tmp=$(mktemp "$(dirname "$FSTAB")/.fstab.XXXXXX")
  awk -v m="$MOUNT_TO" '!($1 !~ /^#/ && $2 == m)' "$FSTAB" > "$tmp"
  printf '%s\n' "$line" >> "$tmp"
  chmod 644 "$tmp"
  mv -f "$tmp" "$FSTAB"
  changed=true
fi
src=$(findmnt -n -o SOURCE --mountpoint "$MOUNT_TO" 2>/dev/null || true)
if [ -z "$src" ]; then
  mount -t "$fs" "$dev" "$MOUNT_TO"
  changed=true
elif [ "$(readlink -f "$src")" != "$dev" ]; then
  echo "$MOUNT_TO has $src mounted, not the volume's device $dev" >&2
  exit 1
fi
echo "@@ device=$dev"
echo "@@ formatted=$formatted"
echo "@@ changed=$changed"
