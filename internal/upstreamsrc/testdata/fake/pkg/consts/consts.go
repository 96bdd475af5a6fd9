package consts

const Kernel = "4.15"
