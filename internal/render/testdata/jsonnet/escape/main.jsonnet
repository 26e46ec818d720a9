import '../../../../../../../../etc/hostname'
